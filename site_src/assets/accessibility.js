/*
 * Connection Lab: what Material's theme leaves out for assistive technology, added after every page
 * load and instant navigation (axe-core checks the result in tests/browser/test_site_pages.py).
 *
 * - The search dialog has role="dialog" but no name.
 * - Material wraps each table in a scroll wrapper; a keyboard user can only scroll a wrapper that can
 *   take the focus, and a screen reader announces it by its name. A wrapper out of view is measured once
 *   it comes near it.
 */
(function () {
  "use strict";

  function nameSearchDialog() {
    document.querySelectorAll('.md-search[role="dialog"]:not([aria-label])').forEach(function (dialog) {
      dialog.setAttribute("aria-label", "Search");
    });
  }

  var SCROLLS_LABEL = "Table, scrolls sideways";
  // A wrapper out of view is not laid out (connlab.css: content-visibility), so whether it scrolls is not
  // known until it comes near the view. Until then it is reachable as if it scrolled: a keyboard user who
  // tabs to it brings it into view, where it is measured; one who could not reach a table that scrolls
  // could not read it.
  var NOT_YET_MEASURED_LABEL = "Table";
  var watched = new WeakSet();

  function notLaidOut(wrapper) {
    var inside = wrapper.firstElementChild;
    return (
      inside !== null &&
      typeof inside.checkVisibility === "function" &&
      !inside.checkVisibility({ contentVisibilityAuto: true })
    );
  }

  function markScrolling(wrapper, label) {
    wrapper.setAttribute("tabindex", "0");
    wrapper.setAttribute("role", "region");
    wrapper.setAttribute("aria-label", label);
  }

  // Only wrappers that scroll now: a tab stop on every table would be noise. Checked again on resize, and
  // when the browser lays out a wrapper that was out of view. The one that has the focus keeps it until it
  // loses it (taking the tab stop away would throw the focus back to the page's start).
  function measure(wrapper) {
    if (notLaidOut(wrapper)) {
      markScrolling(wrapper, NOT_YET_MEASURED_LABEL);
    } else if (wrapper.scrollWidth > wrapper.clientWidth + 1) {
      markScrolling(wrapper, SCROLLS_LABEL);
    } else if (document.activeElement === wrapper) {
      wrapper.addEventListener("blur", function () { measure(wrapper); }, { once: true });
    } else {
      ["tabindex", "role", "aria-label"].forEach(function (name) {
        wrapper.removeAttribute(name);
      });
    }
  }

  function focusableScrollWrappers() {
    document.querySelectorAll(".md-typeset__scrollwrap").forEach(function (wrapper) {
      if (!watched.has(wrapper)) {
        watched.add(wrapper);
        wrapper.addEventListener("contentvisibilityautostatechange", function (event) {
          if (!event.skipped) measure(wrapper);
        });
      }
      measure(wrapper);
    });
  }

  function apply() {
    nameSearchDialog();
    focusableScrollWrappers();
  }

  var resizeQueued = false;
  window.addEventListener("resize", function () {
    if (resizeQueued) return;
    resizeQueued = true;
    requestAnimationFrame(function () {
      resizeQueued = false;
      focusableScrollWrappers();
    });
  });

  // Material emits document$ once on load and after every instant navigation.
  if (typeof window.document$ !== "undefined" && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(apply);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", apply);
  } else {
    apply();
  }
})();
