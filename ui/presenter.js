// Presentation mode in the browser (a constant script: nothing user-controlled is put into it).
// 1. The clicker's keys, PageDown / PageUp, always change the scene: they are caught before any widget
//    sees them, so a focused slider, list or text box never eats them. ← / → change the scene too, except
//    where the focused widget uses them (a slider moves, a text box moves its caret, radio buttons and
//    tabs change): a lecturer nudging γ must not jump scenes. Escape leaves a text box.
// 2. No press is lost: a press is kept until the scene has changed. It is sent once the scene bar is
//    drawn (a deep link still loading), and sent again when the app has gone idle on the same scene (a
//    slider's late update can interrupt the run that carried the press). A press while another is still
//    pending waits for it: each press moves exactly one scene.
// 3. On arrival in a scene, its result (data.target: a Streamlit key) is scrolled to just below the
//    sticky scene bar (a scene without one: the page top), once per arrival (data.token), and kept there
//    until the page has finished drawing, unless the presenter scrolls or clicks first or the next scene
//    has begun: arriving by PageDown looks like opening the scene's link.
// 4. After the presenter changes an input (a sentence and Enter, a slider, a radio, a tab, a select, a
//    button), the result that input drives is brought wholly into view once the run it started has ended,
//    moving the page as little as possible, so that the input stays in view too where both fit.
//    data.drives maps an input's key (or a container's around it) to its result's key; an input inside a
//    result (data.results) drives that result.

// focused widgets whose own ← / → do something (a slider's thumb is a visually hidden range input)
const ARROW_WIDGETS = 'input[type="range"], input[type="radio"], select, [role="slider"], [role="radio"], ' +
  '[role="tab"], [role="combobox"], [role="listbox"], [role="option"], [role="spinbutton"]';
const RESEND_IDLE_MS = 3000; // idle this long on the same scene after a click: the press was lost
const MAX_TRIES = 3;
const PRESS_TTL_MS = 120000;
// what a click changes an input through (a chart's own clicks are not among them)
const CONTROLS = 'button, label, input, [role="tab"], [role="option"], [role="radio"], [role="switch"], ' +
  '[role="checkbox"], [role="slider"]';
// the boxes one types into, where Enter (Ctrl+Enter in a text area) commits and a click changes nothing
const TYPING = 'textarea, input:not([type="radio"], [type="checkbox"], [type="range"])';
const UNSEEN_RUN_MS = 800; // no run seen this long after a commit: it went by unseen, or there was none
const TOUCH_TTL_MS = 5000; // a run that starts this soon after an input was touched is that input's

// the app has finished its script run and shows nothing stale (what tests/e2e's wait_idle checks)
function idle() {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.dataset.testScriptState === "notRunning" && !document.querySelector('[data-stale="true"]');
}

// the scene the browser shows: the page and its slide parameter (other parameters change with the widgets)
function sceneOf(location) {
  return location.pathname + "|" + (new URLSearchParams(location.search).get("slide") || "");
}

// the Streamlit keys of an element (widgets and containers made with key= carry the class st-key-<key>)
function keysOf(el) {
  return el.classList ? [...el.classList].filter((c) => c.startsWith("st-key-")).map((c) => c.slice(7)) : [];
}

// the result that the input at ``el`` drives: the nearest mapped input or container around it, or a result
function drivenBy(el, data) {
  for (let node = el; node && node.classList; node = node.parentElement) {
    for (const key of keysOf(node)) {
      if (data.drives[key]) return data.drives[key];
      if (data.results.includes(key)) return key;
    }
  }
  return null;
}

// what the eye sees of a result: its box, its charts' SVGs and their texts (legends and axis titles may
// reach past a chart's box)
function seenBox(target) {
  const rects = [target, ...target.querySelectorAll(".js-plotly-plot .main-svg, .js-plotly-plot svg text")]
    .map((e) => e.getBoundingClientRect()).filter((r) => r.width > 0 && r.height > 0);
  return { top: Math.min(...rects.map((r) => r.top)), bottom: Math.max(...rects.map((r) => r.bottom)) };
}

function scrollerOf(el) {
  for (let node = el.parentElement; node; node = node.parentElement) {
    const style = getComputedStyle(node);
    if (/(auto|scroll)/.test(style.overflowY) && node.scrollHeight > node.clientHeight) return node;
  }
  return document.scrollingElement;
}

export default function (component) {
  const { data } = component;
  const win = window;
  const doc = document;
  if (data) win.__labData = data; // the page's latest map of inputs to results, for the listeners below

  // a press: the direction, presses queued behind it, the scene it leaves, clicks sent so far;
  // a queued press is sent only once its scene has finished drawing (waitIdle)
  const start = (direction, queued, waitIdle) => ({ direction, queued, waitIdle, from: sceneOf(win.location),
                                                    at: Date.now(), tries: 0, idleSince: 0 });
  const send = (press) => {
    const button = doc.querySelector(`.st-key-present_${press.direction} button`);
    if (!button || button.disabled) return;
    button.click();
    press.tries += 1;
    press.idleSince = 0;
  };
  const watch = () => {
    const press = win.__labPress;
    if (!press) return;
    if (sceneOf(win.location) !== press.from) { // arrived
      win.__labPress = press.queued > 0 ? start(press.direction, press.queued - 1, true) : null;
      return;
    }
    if (Date.now() - press.at > PRESS_TTL_MS) {
      win.__labPress = null;
      return;
    }
    if (press.tries === 0) { // the bar is still being drawn, or a queued press waits for its scene
      if (!press.waitIdle || idle()) send(press);
      return;
    }
    if (!idle()) {
      press.idleSince = 0;
      return;
    }
    press.idleSince = press.idleSince || Date.now();
    if (Date.now() - press.idleSince < RESEND_IDLE_MS) return;
    if (press.tries >= MAX_TRIES) win.__labPress = null; // the button does nothing here: give up
    else send(press);
  };

  if (!win.__labPresenterKeys) {
    win.__labPresenterKeys = true;
    win.addEventListener("keydown", (event) => {
      if (!doc.querySelector(".st-key-present_bar")) return; // not in presentation mode
      if (event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      const el = doc.activeElement;
      const typing = !!el && (el.tagName === "TEXTAREA" || el.isContentEditable ||
        (el.tagName === "INPUT" && !["range", "checkbox", "radio", "button"].includes(el.type)));
      if (event.key === "Escape" && typing) {
        el.blur();
        return;
      }
      const ownsArrows = typing || (!!el && !!el.matches && el.matches(ARROW_WIDGETS));
      let direction = null;
      if (event.key === "PageDown" || (!ownsArrows && event.key === "ArrowRight")) direction = "next";
      if (event.key === "PageUp" || (!ownsArrows && event.key === "ArrowLeft")) direction = "prev";
      if (!direction) return;
      event.preventDefault();
      event.stopImmediatePropagation();
      if (el && el !== doc.body && el.blur) el.blur();
      win.__labTouched = null; // what was typed before the press drives nothing on the next scene
      const pending = win.__labPress;
      if (pending && pending.direction === direction && sceneOf(win.location) === pending.from) {
        pending.queued += 1; // one more scene once this one has arrived
        pending.at = Date.now();
        return;
      }
      win.__labPress = start(direction, 0, false);
      send(win.__labPress);
    }, true);
    win.setInterval(watch, 250);
    installPlacement(win, doc);
    const stop = () => { win.__labScrollUntil = 0; };
    win.addEventListener("wheel", stop, { capture: true, passive: true });
    win.addEventListener("mousedown", stop, true);
    win.addEventListener("touchstart", stop, { capture: true, passive: true });
  }

  if (!data || win.__labScrolledFor === data.token) return;
  win.__labScrolledFor = data.token;
  win.__labTouched = null; // an input touched on the previous scene drives nothing here
  win.__labPlace(data.target, "top");
}

// Placing a result below the scene bar ("top": on arrival) or moving the page as little as brings it wholly
// into view ("nearest": after an edit), and keeping it there until the page has finished drawing: charts
// above it may still grow, and an element of the previous run may stand in for the new one at first.
// A later placement supersedes an earlier one; a scroll, click or touch by the presenter ends it.
function installPlacement(win, doc) {
  let placing = 0;
  win.__labPlace = (key, how) => {
    const mine = ++placing;
    // a cold server may take minutes to draw the result (models load on first use)
    win.__labScrollUntil = Date.now() + 600000;
    let found = 0;
    let idleSince = 0;
    const step = () => {
      if (mine !== placing || Date.now() > win.__labScrollUntil) return;
      const target = key && doc.querySelector(`.st-key-${key}`);
      const bar = doc.querySelector(".st-key-present_bar");
      if (!key && bar) { // a scene without a result opens at the page top, however far down the last page was
        found = found || Date.now();
        const scroller = scrollerOf(bar);
        if (scroller.scrollTop > 0) scroller.scrollTop = 0;
      } else if (target && target.getBoundingClientRect().height > 0) {
        found = found || Date.now();
        // a page's switch pinned under the bar (ui.presentation.PINNED_KEY) covers the top of the page too
        const pinned = doc.querySelector(".st-key-present_pinned");
        // the bar's bottom once it sticks at the top: from a page scrolled to its top, the scroll moves it up
        const top = (bar ? bar.getBoundingClientRect().height : 0) + 8 +
          (pinned ? pinned.getBoundingClientRect().height : 0);
        const bottom = win.innerHeight - 8;
        const box = how === "top" ? target.getBoundingClientRect() : seenBox(target);
        let by = 0;
        if (how === "top" || box.top < top || box.bottom - box.top > bottom - top) by = box.top - top;
        else if (box.bottom > bottom) by = box.bottom - bottom;
        if (Math.abs(by) > 4) scrollerOf(target).scrollBy({ top: by, behavior: "instant" });
      }
      idleSince = idle() ? idleSince || Date.now() : 0;
      const settled = idleSince && Date.now() - idleSince > RESEND_IDLE_MS;
      if (settled && (found ? Date.now() - found > 3000 : how !== "top")) return; // an edit's result may be absent
      win.setTimeout(step, 250);
    };
    step();
  };
  // an edit: the presenter touches an input (pointer or key), and a script run follows within a few seconds
  const touch = (event) => {
    const data = win.__labData;
    if (!data || !data.drives || !event.target || !event.target.closest) return;
    if (!doc.querySelector(".st-key-present_bar")) return; // presentation mode was left: the page stays put
    if (event.target.closest(".st-key-present_bar")) {
      win.__labTouched = null;
      return;
    }
    const key = drivenBy(event.target, data);
    if (key) win.__labTouched = { key, at: Date.now() };
    // a select's options open outside the widget: choosing one still belongs to that widget
    else if (win.__labTouched && event.target.closest('[role="option"], [role="listbox"]')) {
      win.__labTouched.at = Date.now();
    }
  };
  win.addEventListener("pointerdown", touch, true);
  win.addEventListener("keydown", touch, true);
  // A commit whose script run was not seen within UNSEEN_RUN_MS still brings its result into view: a run shorter
  // than a frame (a radio or slider that only slices cached results; a sentence any session has typed before, from
  // the cache) can leave the script state unchanged in the page. Its touch, not taken by a run once the app is idle,
  // says so. A click's touch is then used up; a typed commit keeps its touch, so that a run that starts later still
  // places the result when it ends.
  const commitOf = (event) => {
    const el = event.target;
    if (!el || !el.matches) return null;
    if (event.type === "keydown") { // typed: Enter in a typing box, Ctrl+Enter in a text area
      if (event.key !== "Enter" || !el.matches(TYPING)) return null;
      return el.matches("textarea") && !(event.ctrlKey || event.metaKey) ? null : "typed";
    }
    // a click or change: on a control that is not a typing box (a click on a chart, zoom or legend, changes nothing)
    return el.matches(TYPING) || !el.closest(CONTROLS) ? null : "click";
  };
  const unseenRun = (event) => {
    const commit = commitOf(event);
    const touched = win.__labTouched;
    if (!commit || !touched) return;
    win.setTimeout(() => {
      if (win.__labTouched !== touched || !idle()) return;
      if (commit === "click") win.__labTouched = null;
      win.__labPlace(touched.key, "nearest");
    }, UNSEEN_RUN_MS);
  };
  for (const type of ["click", "change", "keydown"]) win.addEventListener(type, unseenRun, true);
  let edited = null;
  new MutationObserver(() => {
    const app = doc.querySelector('[data-testid="stApp"]');
    const running = !!app && app.dataset.testScriptState === "running";
    const touched = win.__labTouched;
    if (touched && Date.now() - touched.at < TOUCH_TTL_MS) edited = touched.key;
    win.__labTouched = null;
    // a short run may start and end before this callback: the state has changed, so a run went by
    if (!running && edited) {
      win.__labPlace(edited, "nearest");
      edited = null;
    }
  }).observe(doc.body, { attributes: true, subtree: true, attributeFilter: ["data-test-script-state"] });
}
