/*
 * Connection Lab: what Material's theme leaves out for assistive technology, added after every page
 * load and instant navigation (axe-core checks the result in tests/test_site_pages.py).
 *
 * - The search dialog has role="dialog" but no name.
 * - Material wraps each table in a scroll wrapper; on a narrow screen a keyboard user can only scroll
 *   a wrapper that can take the focus, and a screen reader announces it by its name.
 */
(function () {
  "use strict";

  function nameSearchDialog() {
    document.querySelectorAll('.md-search[role="dialog"]:not([aria-label])').forEach(function (dialog) {
      dialog.setAttribute("aria-label", "Search");
    });
  }

  function focusableScrollWrappers() {
    document.querySelectorAll(".md-typeset__scrollwrap").forEach(function (wrapper) {
      wrapper.setAttribute("tabindex", "0");
      wrapper.setAttribute("role", "region");
      wrapper.setAttribute("aria-label", "Table, scrolls sideways on narrow screens");
    });
  }

  function apply() {
    nameSearchDialog();
    focusableScrollWrappers();
  }

  // Material emits document$ once on load and after every instant navigation.
  if (typeof window.document$ !== "undefined" && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(apply);
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", apply);
  } else {
    apply();
  }
})();
