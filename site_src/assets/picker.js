/* The machine picker (connlab.site.layout): the select, filled from its nav's JSON list of machines (its
   data-machines attribute, which Material's instant navigation keeps as it is), points
   the link at the chosen machine's page; and the panel selectors (the pool-sizing simulator's machine): the
   select shows the chosen panel. Choosing never navigates by itself, so a keyboard user can move through the
   list freely.

   The choice is the page's state in its URL: ?machine=<id>, written with history.replaceState on every
   change (a shared link or a reload shows it; no history entry is added), and read back when the page is
   shown: on load, on Material's instant navigation (document$), after Back and Forward (pageshow, popstate).
   A choice applies to every picker and panel selector of the page that lists the machine; an id none lists
   is ignored. Without one in the URL the picker shows its default (the entry marked "default", the machine
   with the most of the article's data), and a panel selector its own first choice. The select and the link
   are always set together, from the same choice, so a select the browser restored never disagrees with its
   link. */
(function () {
  "use strict";
  var PARAM = "machine";

  // The machine the page's URL names, or null.
  function wanted() {
    try {
      return new URL(window.location.href).searchParams.get(PARAM);
    } catch (error) {
      return null;
    }
  }

  // The choice into the URL, in place of the current history entry (its state kept: Material's is there).
  function remember(id) {
    var url;
    try {
      url = new URL(window.location.href);
    } catch (error) {
      return;
    }
    if (url.searchParams.get(PARAM) === id) return;
    url.searchParams.set(PARAM, id);
    try {
      window.history.replaceState(window.history.state, "", url.href);
    } catch (error) {
      // A page opened from a file: URL may refuse; the choice still shows.
    }
  }

  function pickers(root) {
    return root.querySelectorAll("nav.connlab-picker[data-connlab-wired]");
  }

  function switches(root) {
    return root.querySelectorAll("select.connlab-switch__select[data-switch]");
  }

  // A picker set to a machine (its entry), select and link together.
  function setPicker(nav, machine) {
    var select = nav.querySelector("select");
    var link = nav.querySelector("a.connlab-picker__open");
    select.value = machine.url;
    link.href = machine.url;
    link.textContent = "Open " + machine.id;
  }

  function machinesOf(nav) {
    return nav.connlabMachines || [];
  }

  function find(machines, id) {
    for (var i = 0; i < machines.length; i += 1) {
      if (machines[i].id === id) return machines[i];
    }
    return null;
  }

  // The panels that share a selector's data-switch: the chosen one shown, the rest hidden. charts.js draws a
  // chart when its hidden panel is shown (its view's width changes), from the page alone: nothing is fetched.
  function showPanels(root, select) {
    var group = select.getAttribute("data-switch");
    root.querySelectorAll('.connlab-switch__panel[data-switch="' + group + '"]').forEach(function (panel) {
      panel.hidden = panel.getAttribute("data-machine") !== select.value;
    });
  }

  function hasOption(select, value) {
    for (var i = 0; i < select.options.length; i += 1) {
      if (select.options[i].value === value) return true;
    }
    return false;
  }

  // Every picker and selector of the page that lists `id` set to it (the others keep theirs).
  function choose(root, id) {
    pickers(root).forEach(function (nav) {
      var machine = find(machinesOf(nav), id);
      if (machine) setPicker(nav, machine);
    });
    switches(root).forEach(function (select) {
      if (hasOption(select, id)) {
        select.value = id;
        showPanels(root, select);
      }
    });
  }

  // The page as its URL says: the machine it names where a picker or selector lists it, else each picker's
  // default; each selector shows the panel of what it holds.
  function restore(root) {
    var id = wanted();
    pickers(root).forEach(function (nav) {
      var machines = machinesOf(nav);
      var machine = (id && find(machines, id)) || nav.connlabDefault;
      if (machine) setPicker(nav, machine);
    });
    switches(root).forEach(function (select) {
      if (id && hasOption(select, id)) select.value = id;
      showPanels(root, select);
    });
  }

  function wire(root) {
    root.querySelectorAll("nav.connlab-picker").forEach(function (nav) {
      var select = nav.querySelector("select");
      var link = nav.querySelector("a.connlab-picker__open");
      var listed = nav.getAttribute("data-machines");
      if (!select || !link || !listed || nav.hasAttribute("data-connlab-wired")) return;
      var machines = JSON.parse(listed);
      if (!machines.length) return;
      nav.setAttribute("data-connlab-wired", "");
      nav.connlabMachines = machines;
      nav.connlabDefault = machines[0];
      machines.forEach(function (machine) {
        if (machine["default"]) nav.connlabDefault = machine;
        select.add(new Option(machine.id, machine.url));
      });
      // Options made here are not the browser's to restore: the URL says what is chosen.
      select.setAttribute("autocomplete", "off");
      select.hidden = false;
      select.addEventListener("change", function () {
        var option = select.options[select.selectedIndex];
        if (!option) return;
        remember(option.textContent);
        choose(document, option.textContent);
      });
    });
    switches(root).forEach(function (select) {
      if (select.dataset.wired) return;
      select.dataset.wired = "1";
      select.addEventListener("change", function () {
        showPanels(document, select);
        remember(select.value);
        choose(document, select.value);
      });
    });
    restore(root);
  }

  // Material's instant navigation swaps the page without a load event: document$ fires on every page.
  if (window.document$ && typeof window.document$.subscribe === "function") {
    window.document$.subscribe(function () { wire(document); });
  } else if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", function () { wire(document); });
  } else {
    wire(document);
  }
  // Back and Forward: a page from the back-forward cache keeps what it showed, a page loaded again may have
  // selects the browser restored; either way the URL decides. popstate: a history step within the document.
  window.addEventListener("pageshow", function () { restore(document); });
  window.addEventListener("popstate", function () { restore(document); });
})();
