// Unit tests of presentation mode's decisions (ui/placement.mjs), outside the browser: node --test tests/js/placement.test.mjs
// (run by tests/test_presenter_placement.py).
import assert from "node:assert/strict";
import { test } from "node:test";

import { answered, editTarget, emptyQueue, placement, pressed, RESENDS, scrollDelta } from "../../ui/placement.mjs";

const BAND = { top: 90, bottom: 712 }; // below a 82 px bar, 8 px clear at each end of a 720 px screen

test("arrival starts the result just below the bar, from above or below", () => {
  assert.equal(scrollDelta({ top: 2680, bottom: 3300 }, BAND, "top"), 2590);
  assert.equal(scrollDelta({ top: -400, bottom: 100 }, BAND, "top"), -490);
});

test("an edit moves the page as little as brings its result wholly into view", () => {
  assert.equal(scrollDelta({ top: 500, bottom: 900 }, BAND, "nearest"), 188); // its end comes up to the screen's end
  assert.equal(scrollDelta({ top: 20, bottom: 300 }, BAND, "nearest"), -70); // its top comes down below the bar
  assert.equal(scrollDelta({ top: 200, bottom: 600 }, BAND, "nearest"), 0); // in view: the page stays
});

test("a result taller than the screen starts below the bar", () => {
  assert.equal(scrollDelta({ top: 300, bottom: 1300 }, BAND, "nearest"), 210);
});

test("a few pixels' difference moves nothing (no jitter while charts draw)", () => {
  assert.equal(scrollDelta({ top: 94, bottom: 400 }, BAND, "top"), 0);
  assert.equal(scrollDelta({ top: 95, bottom: 400 }, BAND, "top"), 5);
});

const ran = (slide, handled = null, seen = null) => ({ slide, handled, seen });

test("a press goes at once, from its scene; the presses behind it wait for Python's answer, one scene each", () => {
  let step = pressed(emptyQueue(), "next", "a", "worked");
  assert.deepEqual(step.send, { id: "a", direction: "next", from: "worked", sends: 1 });
  step = pressed(step.queue, "next", "b", "worked");
  assert.equal(step.send, null);
  step = pressed(step.queue, "prev", "c", "worked");
  assert.equal(step.send, null);
  // a run that saw the press ended on the scene it left (a slider's late rerun undid the switch): Python moves on
  // from there in its next run, nothing to send
  step = answered(step.queue, ran("worked", null, "a"), "d");
  assert.equal(step.send, null);
  step = answered(step.queue, ran("syntax", null, "a"), "e"); // the next scene's run: the next press, from there
  assert.deepEqual(step.send, { id: "e", direction: "next", from: "syntax", sends: 1 });
  step = answered(step.queue, ran("syntax", "e", "e"), "f"); // handled where it was: the last scene, say
  assert.deepEqual(step.send, { id: "f", direction: "prev", from: "syntax", sends: 1 });
  step = answered(step.queue, ran("worked"), "g");
  assert.equal(step.send, null);
  assert.deepEqual(step.queue, emptyQueue());
});

test("a run that did not see the pending press gets it again, the same press, a few times at most", () => {
  let step = pressed(emptyQueue(), "next", "a", "worked");
  for (let sends = 2; sends <= RESENDS + 1; sends++) {
    step = answered(step.queue, ran("worked"), "x");
    assert.deepEqual(step.send, { id: "a", direction: "next", from: "worked", sends });
  }
  assert.equal(answered(step.queue, ran("worked"), "x").send, null);
});

const DRIVES = { vec_text: "static_result", elmo_result: "elmo_s_result" };
const RESULTS = ["static_result", "elmo_s_result", "att_result"];

test("the touched input's result, when the run changed that input", () => {
  assert.equal(editTarget(["vec_text", "vec_inputs"], ["vec_text"], DRIVES, RESULTS), "static_result");
  // a slider inside a container that drives a result
  assert.equal(editTarget(["elmo_gamma", "elmo_result"], ["elmo_gamma"], DRIVES, RESULTS), "elmo_s_result");
  // a tab inside a result drives that result
  assert.equal(editTarget(["att_tab", "att_result"], ["att_tab"], DRIVES, RESULTS), "att_result");
});

test("nothing when the run did not change the touched input", () => {
  assert.equal(editTarget(["vec_text"], ["elmo_preset_uniform"], DRIVES, RESULTS), null); // a button's reset
  assert.equal(editTarget([], ["vec_text"], DRIVES, RESULTS), null); // a value the page seeded, nothing touched
  assert.equal(editTarget(["unmapped"], ["unmapped"], DRIVES, RESULTS), null); // an input that drives nothing
});

const told = (token, run, changed = []) => ({ arrival: { key: "static_result", token }, changed, run });

test("a scene's arrival is placed once, at the top; later runs of that scene place only edits", () => {
  let seen = { arrival: null, run: null };
  let step = placement(seen, told("pair:1", 1), [], DRIVES, RESULTS);
  assert.deepEqual(step.place, { key: "static_result", how: "top" });
  seen = step.seen;
  assert.equal(placement(seen, told("pair:1", 1), [], DRIVES, RESULTS).place, null); // the same run drawn again
  step = placement(seen, told("pair:1", 2, ["vec_text"]), ["vec_text"], DRIVES, RESULTS);
  assert.deepEqual(step.place, { key: "static_result", how: "nearest" });
  assert.equal(placement(step.seen, told("pair:1", 3, ["other"]), ["vec_text"], DRIVES, RESULTS).place, null);
  // the same scene arrived at again (PageDown, PageUp) is placed again
  assert.equal(placement(step.seen, told("pair:2", 4), [], DRIVES, RESULTS).place.how, "top");
});

test("a scene without a result opens at the page top", () => {
  const step = placement({ arrival: null, run: null }, { arrival: { key: null, token: "exercises:1" }, changed: [],
                                                          run: 1 }, [], DRIVES, RESULTS);
  assert.deepEqual(step.place, { key: null, how: "top" });
});

test("a student's page (no scene: arrival null) places its first edit, not the page top", () => {
  const step = placement({ arrival: null, run: null }, { arrival: null, changed: ["vec_text"], run: 1 }, ["vec_text"],
                         DRIVES, RESULTS);
  assert.deepEqual(step.place, { key: "static_result", how: "nearest" });
});
