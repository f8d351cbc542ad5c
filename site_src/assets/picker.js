/* The machine picker (connlab.site.layout): the select points the link at the chosen machine's page.
   Choosing never navigates by itself, so a keyboard user can move through the list freely. */
(function () {
  "use strict";
  function wire(root) {
    root.querySelectorAll("nav.connlab-picker").forEach(function (nav) {
      var select = nav.querySelector("select");
      var link = nav.querySelector("a.connlab-picker__open");
      if (!select || !link || select.dataset.wired) return;
      select.dataset.wired = "1";
      select.addEventListener("change", function () {
        var option = select.options[select.selectedIndex];
        link.href = option.value;
        link.textContent = "Open " + option.textContent;
      });
    });
  }
  // Material's instant navigation swaps the page without a load event: document$ fires on every page.
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(function () { wire(document); });
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { wire(document); });
  } else {
    wire(document);
  }
})();
