// The playground's few conveniences; the page works without them.
(function () {
  "use strict";
  var endUser = document.getElementById("pg-end-user");
  var picker = document.getElementById("pg-picker");
  var tool = document.getElementById("pg-tool");
  var hiddenEndUser = document.getElementById("pg-picker-end-user");

  // Choosing a tool shows its form at once, keeping the end user typed so far.
  if (picker && tool) {
    var choose = document.getElementById("pg-choose");
    if (choose) { choose.hidden = true; }
    tool.addEventListener("change", function () {
      if (hiddenEndUser && endUser) { hiddenEndUser.value = endUser.value; }
      picker.submit();
    });
  }

  // A recent end user fills the field rather than leaving the page.
  document.querySelectorAll(".pg-recent-end-user").forEach(function (link) {
    link.addEventListener("click", function (event) {
      if (!endUser) { return; }
      event.preventDefault();
      endUser.value = link.getAttribute("data-end-user");
      endUser.focus();
    });
  });

  // "Add another item": a copy of the last row, emptied, with the next index in its names and ids.
  document.querySelectorAll(".pg-add-row").forEach(function (button) {
    var name = button.getAttribute("data-rows");
    button.hidden = false;
    button.addEventListener("click", function () {
      var rows = button.parentNode.querySelectorAll(".pg-row");
      var last = rows[rows.length - 1];
      var index = rows.length;
      var copy = last.cloneNode(true);
      var from = new RegExp("^(pg-)?" + name + "-\\d+-");
      copy.setAttribute("data-index", String(index));
      copy.querySelector("legend").textContent = "Item " + (index + 1);
      copy.querySelectorAll("[name], [id], [for], [aria-describedby]").forEach(function (el) {
        ["name", "id", "for"].forEach(function (attr) {
          var value = el.getAttribute(attr);
          if (value) { el.setAttribute(attr, value.replace(from, "$1" + name + "-" + index + "-")); }
        });
        var described = el.getAttribute("aria-describedby");
        if (described) {
          el.setAttribute("aria-describedby", described.split(" ").map(function (id) {
            return id.replace(from, "$1" + name + "-" + index + "-");
          }).filter(function (id) { return id.indexOf("-error") === -1; }).join(" "));
        }
        if (el.tagName === "INPUT" || el.tagName === "TEXTAREA") { el.value = ""; el.removeAttribute("aria-invalid"); }
        if (el.tagName === "SELECT") { el.selectedIndex = Array.prototype.findIndex.call(el.options, function (o) { return o.defaultSelected; }); }
      });
      copy.querySelectorAll(".field-error").forEach(function (el) { el.remove(); });
      copy.querySelectorAll(".pg-invalid").forEach(function (el) { el.classList.remove("pg-invalid"); });
      last.parentNode.insertBefore(copy, button);
      var first = copy.querySelector("textarea, input");
      if (first) { first.focus(); }
    });
  });
})();
