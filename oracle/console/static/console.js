// Live queue: reload the queue page when the server says the queue changed (server-sent
// events from /events/queue). The only script of the console; pages work without it.
"use strict";
(function () {
  var source = document.body.getAttribute("data-live-queue");
  if (!source || !window.EventSource) { return; }
  var seen = false;
  var events = new EventSource(source);
  events.addEventListener("queue", function () {
    if (!seen) { seen = true; return; }  // the first event is the queue as loaded
    var active = document.activeElement;
    if (active && (active.tagName === "INPUT" || active.tagName === "SELECT")) { return; }
    window.location.reload();
  });
  // The session ended (signed out elsewhere, or the account disabled): the reload shows
  // the sign-in page, and the stream is not opened again.
  events.addEventListener("signed_out", function () {
    events.close();
    window.location.reload();
  });
})();
