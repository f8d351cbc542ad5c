/* The machine picker (connlab.site.layout): the select, filled from the page's JSON list of machines, points
   the link at the chosen machine's page;
   and the panel selectors (the pool-sizing simulator's machine): the select shows the chosen panel.
   Choosing never navigates by itself, so a keyboard user can move through the list freely. */
(function () {
  "use strict";
  function wire(root) {
    root.querySelectorAll("nav.connlab-picker").forEach(function (nav) {
      var select = nav.querySelector("select");
      var link = nav.querySelector("a.connlab-picker__open");
      var listed = nav.querySelector("script.connlab-picker__machines");
      if (!select || !link || !listed || select.dataset.wired) return;
      select.dataset.wired = "1";
      JSON.parse(listed.textContent).forEach(function (machine) {
        select.add(new Option(machine.id, machine.url));
      });
      select.hidden = false;
      select.addEventListener("change", function () {
        var option = select.options[select.selectedIndex];
        link.href = option.value;
        link.textContent = "Open " + option.textContent;
      });
    });
  }
  // A selector of panels (the pool-sizing simulator's machine): the panels that share the select's
  // data-switch show the one whose data-machine is chosen and hide the rest. charts.js draws a chart when
  // its hidden panel is shown (its view's width changes), from the page alone: nothing is fetched.
  function wireSwitches(root) {
    root.querySelectorAll("select.connlab-switch__select[data-switch]").forEach(function (select) {
      if (select.dataset.wired) return;
      select.dataset.wired = "1";
      var group = select.getAttribute("data-switch");
      function show() {
        root.querySelectorAll('.connlab-switch__panel[data-switch="' + group + '"]').forEach(function (panel) {
          panel.hidden = panel.getAttribute("data-machine") !== select.value;
        });
      }
      select.addEventListener("change", show);
      // A select the browser restored to an earlier choice (back and forward) shows that choice's panel.
      show();
    });
  }
  function wireAll(root) {
    wire(root);
    wireSwitches(root);
  }
  // Material's instant navigation swaps the page without a load event: document$ fires on every page.
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(function () { wireAll(document); });
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { wireAll(document); });
  } else {
    wireAll(document);
  }
})();
