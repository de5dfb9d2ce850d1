// Presentation mode's decisions, without the page: what to place, where, and which press to send. Pure functions
// of what Python tells at the end of each run (ui/presentation.py) and of what the presenter did; ui/presenter.js
// applies them to the page. Unit-tested outside the browser: tests/js/placement.test.mjs (node --test).

// How far to scroll (px, + is down) so that ``box`` ({top, bottom} on the screen) lies in ``band`` (the free
// screen below the scene bar: {top, bottom}): "top" starts it at the band's top (a scene's arrival); "nearest"
// moves the page as little as brings it wholly into view (an edit, so that the input above it may stay in view), or
// starts it at the band's top where it is taller than the band. Under 5 px: no move (no jitter while charts draw).
export function scrollDelta(box, band, how) {
  let by = 0;
  if (how === "top" || box.top < band.top || box.bottom - box.top > band.bottom - band.top) by = box.top - band.top;
  else if (box.bottom > band.bottom) by = box.bottom - band.bottom;
  return Math.abs(by) > 4 ? by : 0;
}

// The clicker's presses: each moves exactly one scene. A press carries the scene it leaves (``from``: the URL's
// slide); Python moves on from that scene only, so a press that reaches it twice moves once. A press is sent at
// once unless an earlier one is still unanswered; then it waits, and goes once Python's run shows another scene
// than the earlier press left, or tells that press handled (the last scene: nowhere to go). A run that ends without
// having seen the pending press (the rerun of a slider dragged just before can carry the widgets' values without
// it) gets it sent again, at most RESENDS times. A queue: {pending: the press sent and not yet answered, with its
// sends so far, or null; waiting: directions}.
export const RESENDS = 3;
export const emptyQueue = () => ({ pending: null, waiting: [] });

// a new press in ``direction`` with a fresh ``id`` on scene ``from``: the queue after it, and the press to send
// now (or null)
export function pressed(queue, direction, id, from) {
  if (queue.pending) return { queue: { ...queue, waiting: [...queue.waiting, direction] }, send: null };
  const press = { id, direction, from, sends: 1 };
  return { queue: { pending: press, waiting: queue.waiting }, send: press };
}

// A run ended (``told``: the scene it showed, ``slide``; the last press handled, ``handled``; the press it saw,
// ``seen``): the queue after that, and the press to send (the pending one again, or a waiting one with the fresh
// ``id``) or null
export function answered(queue, told, id) {
  const pending = queue.pending;
  if (!pending) return { queue, send: null };
  if (pending.id !== told.handled && pending.from === told.slide) { // not answered yet
    if (told.seen === pending.id || pending.sends > RESENDS) return { queue, send: null };
    const again = { ...pending, sends: pending.sends + 1 };
    // (the number of sends makes the value new, so that it reaches Python as a change)
    return { queue: { ...queue, pending: again }, send: again };
  }
  if (!queue.waiting.length) return { queue: emptyQueue(), send: null };
  const press = { id, direction: queue.waiting[0], from: told.slide, sends: 1 };
  return { queue: { pending: press, waiting: queue.waiting.slice(1) }, send: press };
}

// The result a lecturer's edit drives. ``touched``: the Streamlit keys of the element the presenter last touched
// and of the elements around it, innermost first; ``changed``: the keys whose values the run changed (Python's
// comparison). The input is the innermost touched key that changed; its result is the first key from there
// outwards that ``drives`` maps (an input, or a container around inputs) or that is a result itself (an input
// inside a result drives that result). null: the run was not the touched input's (a button reset, a seeded value).
export function editTarget(touched, changed, drives, results) {
  const start = touched.findIndex((key) => changed.includes(key));
  if (start < 0) return null;
  for (const key of touched.slice(start)) {
    if (drives[key]) return drives[key];
    if (results.includes(key)) return key;
  }
  return null;
}

// What a run's end brings into view, from what Python told (``told``: {arrival: {key, token} | null, changed, run}) and
// what was seen before (``seen``: {arrival: the last arrival token placed, run: the last run handled}): a scene
// just arrived at starts its result (or the page top: key null) below the bar; otherwise an edit's result comes
// wholly into view. Returns {seen, place: {key, how} | null}.
export function placement(seen, told, touched, drives, results) {
  if (told.run === seen.run) return { seen, place: null }; // the same run's data drawn again
  // (a student's page: no scene arrives, arrival null; only edits are placed)
  const next = { arrival: told.arrival ? told.arrival.token : seen.arrival, run: told.run };
  if (told.arrival && told.arrival.token !== seen.arrival) {
    return { seen: next, place: { key: told.arrival.key, how: "top" } };
  }
  const key = editTarget(touched, told.changed, drives, results);
  return { seen: next, place: key ? { key, how: "nearest" } : null };
}
