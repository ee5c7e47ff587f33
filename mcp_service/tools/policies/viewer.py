"""The citation viewer: an MCP Apps view (``ui://``, the ``io.modelcontextprotocol/ui`` extension) that a host
shows beside a ``get_page_image``, ``search_policy`` or ``get_policy_section`` result.

It renders the cited page as the tool returned it (the PNG with the passage highlighted in yellow), the
citation as people write it, and the quoted passages; hosts without the extension still get the text block and
the resource links. The view is one static HTML document with its script inline: it reads the tool result the
host sends (``ui/notifications/tool-result``, JSON-RPC over ``postMessage``) and never fetches anything, so its
CSP needs no domain. Document text is set as text (``textContent``), never as markup.
"""

from __future__ import annotations

from mcp.server.apps import Apps

VIEWER_URI = "ui://policy-kb/citation-viewer.html"

VIEWER_HTML = """<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>Citation</title>
<style>
  body { font: 14px/1.45 system-ui, sans-serif; margin: 0.75rem; color: #1b1b1b; }
  #citation { font-weight: 600; margin-bottom: 0.5rem; }
  #page { max-width: 100%; border: 1px solid #bbb; display: none; }
  ol { padding-left: 1.4rem; }
  blockquote { margin: 0.25rem 0 0.75rem; padding-left: 0.6rem; border-left: 3px solid #e0c000; color: #333; }
</style>
</head>
<body>
<div id="citation">Waiting for a result</div>
<img id="page" alt="The cited page, the passage highlighted">
<ol id="passages"></ol>
<script>
"use strict";
const citation = document.getElementById("citation");
const page = document.getElementById("page");
const passages = document.getElementById("passages");

function cite(entry) {
  const documentName = [entry.source, entry.version_label].filter(Boolean).join(" ");
  const pages = entry.page_numbers || (entry.page_number ? [entry.page_number] : []);
  const pdf = pages.length ? pages[0] : null;
  const printed = entry.printed_page;
  let where = "";
  if (printed) {
    where = (/^\\d.*[-\\u2013]\\d+$/.test(printed) ? "pp. " : "p. ") + printed;
    if (pdf && String(pdf) !== printed) where += " (PDF page " + pdf + ")";
  } else if (pdf) {
    where = "PDF page " + pdf;
  }
  return [documentName, entry.section_ref, where].filter(Boolean).join(", ");
}

function passage(entry) {
  const item = document.createElement("li");
  const head = document.createElement("div");
  head.textContent = cite(entry);
  item.appendChild(head);
  if (entry.text) {
    const quote = document.createElement("blockquote");
    quote.textContent = entry.text.length > 600 ? entry.text.slice(0, 600) + " ..." : entry.text;
    item.appendChild(quote);
  }
  passages.appendChild(item);
}

function show(result) {
  const data = result.structuredContent || {};
  const image = (result.content || []).find((block) => block.type === "image");
  passages.replaceChildren();
  if (image) {
    page.src = "data:" + image.mimeType + ";base64," + image.data;
    page.style.display = "block";
  }
  if (data.status === "error") {
    citation.textContent = "Error (" + data.error_type + "): " + data.message;
  } else if (Array.isArray(data.results)) {
    const day = data.effective_date ? " in force on " + data.effective_date : "";
    citation.textContent = data.results.length + " passages" + day;
    data.results.forEach(passage);
  } else {
    citation.textContent = cite(data) + (data.highlighted ? " \\u2014 " + data.highlighted + " lines highlighted" : "");
    if (data.text) passage(data);
  }
}

window.addEventListener("message", (event) => {
  const message = event.data;
  if (message && message.jsonrpc === "2.0" && message.method === "ui/notifications/tool-result") {
    show(message.params || {});
  }
});
if (window.parent !== window) {
  window.parent.postMessage({ jsonrpc: "2.0", id: 1, method: "ui/initialize", params: {
    appInfo: { name: "policy-kb citation viewer", version: "1" }, appCapabilities: {},
    protocolVersion: "2026-01-26" } }, "*");
}
</script>
</body>
</html>
"""


def viewer_extension() -> Apps:
    """The MCP Apps extension with the viewer registered as its ``ui://`` resource."""
    apps = Apps()
    apps.add_html_resource(
        VIEWER_URI,
        VIEWER_HTML,
        name="citation_viewer",
        title="Citation viewer",
        description="The cited page with the passage highlighted, and its citation",
        prefers_border=True,
    )
    return apps


VIEWER_META = {"ui": {"resourceUri": VIEWER_URI}}
"""The ``_meta`` a tool carries to be shown in the viewer."""
