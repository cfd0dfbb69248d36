/* twin memory console: the few lines of JavaScript it needs. No build step, no framework.
   Copy buttons: <button type="button" data-copy="#element-id">Copy</button> copies that element's text
   and says so in its own live region. */
(function () {
  "use strict";
  function announce(button, text) {
    var status = button.parentNode.querySelector(".copy-status");
    if (!status) {
      status = document.createElement("span");
      status.className = "copy-status";
      status.setAttribute("role", "status");
      button.insertAdjacentElement("afterend", status);
    }
    status.textContent = text;
    setTimeout(function () { status.textContent = ""; }, 2500);
  }
  function fallbackCopy(text) {
    var area = document.createElement("textarea");
    area.value = text;
    area.setAttribute("readonly", "");
    area.className = "visually-hidden";
    document.body.appendChild(area);
    area.select();
    var ok = false;
    try { ok = document.execCommand("copy"); } catch (e) { ok = false; }
    document.body.removeChild(area);
    return ok;
  }
  document.addEventListener("click", function (event) {
    var button = event.target.closest("[data-copy]");
    if (!button) { return; }
    var source = document.querySelector(button.getAttribute("data-copy"));
    if (!source) { return; }
    var text = source.value !== undefined && source.tagName !== "PRE" && source.tagName !== "CODE" ? source.value : source.textContent;
    if (navigator.clipboard && window.isSecureContext) {
      navigator.clipboard.writeText(text).then(function () { announce(button, "Copied"); },
        function () { announce(button, fallbackCopy(text) ? "Copied" : "Select and copy it by hand"); });
    } else {
      announce(button, fallbackCopy(text) ? "Copied" : "Select and copy it by hand");
    }
  });
  /* A form whose submit button carries data-confirm-input="#id" stays disabled until that field holds
     the expected text (data-expected on the field): the typed confirmation for destructive actions. The
     server checks it again. */
  function syncConfirm(field) {
    var expected = field.getAttribute("data-expected");
    var button = document.querySelector("[data-confirm-input='#" + field.id + "']");
    if (button) { button.disabled = field.value.trim() !== expected; }
  }
  document.addEventListener("input", function (event) {
    if (event.target.hasAttribute && event.target.hasAttribute("data-expected")) { syncConfirm(event.target); }
  });
  document.addEventListener("DOMContentLoaded", function () {
    document.querySelectorAll("[data-expected]").forEach(syncConfirm);
  });
})();

/* The consent card: while the chosen project is one where the person is a Viewer, Read and save is off. */
(function () {
  "use strict";
  var project = document.getElementById("id_project");
  if (!project) { return; }
  function sync() {
    var option = project.options[project.selectedIndex];
    var canWrite = !option || option.getAttribute("data-can-write") !== "0";
    var write = document.querySelector('input[name="access"][value="write"]');
    var read = document.querySelector('input[name="access"][value="read"]');
    if (!write) { return; }
    write.disabled = !canWrite;
    if (!canWrite && write.checked && read) { read.checked = true; }
  }
  project.addEventListener("change", sync);
  sync();
})();
