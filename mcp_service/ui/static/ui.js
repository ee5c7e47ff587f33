/* policy-kb web page: the "Copy citation" buttons. Served from this origin (no inline script: the
   Content-Security-Policy allows none). The clipboard API where the browser grants it, else a selected
   text area and the copy command; the button's status says which happened. */
"use strict";

function copyBySelection(text) {
  const area = document.createElement("textarea");
  area.value = text;
  area.setAttribute("readonly", "");
  area.className = "offscreen";
  document.body.appendChild(area);
  area.select();
  let copied = false;
  try { copied = document.execCommand("copy"); } catch (error) { copied = false; }
  area.remove();
  return copied;
}

document.addEventListener("click", async (event) => {
  const button = event.target.closest("button.copy");
  if (!button) { return; }
  const text = button.dataset.citation || "";
  let copied = false;
  if (navigator.clipboard && window.isSecureContext) {
    try { await navigator.clipboard.writeText(text); copied = true; } catch (error) { copied = false; }
  }
  if (!copied) { copied = copyBySelection(text); }
  const status = button.parentElement.querySelector(".copied");
  if (status) { status.textContent = copied ? "Copied." : "Not copied: select the citation and copy it."; }
  button.dataset.copied = copied ? "yes" : "no";
});
