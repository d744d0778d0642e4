// Live queue: the server sends what changed (server-sent events from /events/queue);
// the page re-fetches only the rows it shows that changed (/queue/rows?ids=...) and puts
// them in place, and says how many items arrived or left elsewhere, with a link to
// reload. The only script of the console; every page works without it.
"use strict";
(function () {
  var source = document.body.getAttribute("data-live-queue");
  if (!source || !window.EventSource) { return; }
  var events = new EventSource(source);
  var note = document.querySelector(".live-note");
  var elsewhere = 0;

  function shownRow(id) {
    return document.querySelector("table.queue tr[data-review='" + id + "']");
  }

  function tell(count) {
    if (!note || count === 0) { return; }
    elsewhere += count;
    note.textContent = "";
    note.appendChild(document.createTextNode(
      elsewhere + " change" + (elsewhere === 1 ? "" : "s") + " elsewhere in the queue · "));
    var link = document.createElement("a");
    link.href = window.location.pathname + window.location.search;
    link.textContent = "reload";
    note.appendChild(link);
    note.hidden = false;
  }

  function replaceRows(ids) {
    if (ids.length === 0) { return; }
    fetch("/queue/rows?ids=" + ids.join(","), { credentials: "same-origin" })
      .then(function (response) {
        if (!response.ok) { throw new Error(String(response.status)); }
        return response.text();
      })
      .then(function (html) {
        // Parsed as inert markup (no script runs), then moved into the table.
        var parsed = new DOMParser().parseFromString(
          "<table><tbody>" + html + "</tbody></table>", "text/html");
        parsed.querySelectorAll("tr[data-review]").forEach(function (row) {
          var old = shownRow(row.getAttribute("data-review"));
          if (old) { old.replaceWith(document.importNode(row, true)); }
        });
      })
      .catch(function () { tell(ids.length); });
  }

  events.addEventListener("changes", function (message) {
    var change = JSON.parse(message.data);
    var active = document.activeElement;
    var onPage = [];
    var off = 0;
    change.changed.concat(change.removed).forEach(function (id) {
      if (shownRow(id)) { onPage.push(id); } else { off += 1; }
    });
    off += change.added.length;
    if (!(active && active.closest && active.closest("table.queue form"))) {
      replaceRows(onPage);
    } else {
      off += onPage.length;
    }
    tell(off);
  });
  // The session ended (signed out elsewhere, or the account disabled): the reload shows
  // the sign-in page, and the stream is not opened again.
  events.addEventListener("signed_out", function () {
    events.close();
    window.location.reload();
  });
})();
