/*
 * Connection Lab: what Material's theme leaves out for assistive technology, added after every page
 * load and instant navigation (axe-core checks the result in tests/test_site_pages.py).
 *
 * - The search dialog has role="dialog" but no name.
 * - Material wraps each table in a scroll wrapper; a keyboard user can only scroll a wrapper that can
 *   take the focus, and a screen reader announces it by its name.
 */
(function () {
  "use strict";

  function nameSearchDialog() {
    document.querySelectorAll('.md-search[role="dialog"]:not([aria-label])').forEach(function (dialog) {
      dialog.setAttribute("aria-label", "Search");
    });
  }

  // Only wrappers that scroll now: a tab stop on every table would be noise. Checked again on resize.
  function focusableScrollWrappers() {
    document.querySelectorAll(".md-typeset__scrollwrap").forEach(function (wrapper) {
      if (wrapper.scrollWidth > wrapper.clientWidth + 1) {
        wrapper.setAttribute("tabindex", "0");
        wrapper.setAttribute("role", "region");
        wrapper.setAttribute("aria-label", "Table, scrolls sideways");
      } else {
        ["tabindex", "role", "aria-label"].forEach(function (name) {
          wrapper.removeAttribute(name);
        });
      }
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
