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
//    sticky scene bar, once per arrival (data.token), and kept there until the page has finished
//    drawing, unless the presenter scrolls or clicks first or the next scene has begun.

// focused widgets whose own ← / → do something (a slider's thumb is a visually hidden range input)
const ARROW_WIDGETS = 'input[type="range"], input[type="radio"], select, [role="slider"], [role="radio"], ' +
  '[role="tab"], [role="combobox"], [role="listbox"], [role="option"], [role="spinbutton"]';
const RESEND_IDLE_MS = 3000; // idle this long on the same scene after a click: the press was lost
const MAX_TRIES = 3;
const PRESS_TTL_MS = 120000;

// the app has finished its script run and shows nothing stale (what tests/e2e's wait_idle checks)
function idle() {
  const app = document.querySelector('[data-testid="stApp"]');
  return !!app && app.dataset.testScriptState === "notRunning" && !document.querySelector('[data-stale="true"]');
}

// the scene the browser shows: the page and its slide parameter (other parameters change with the widgets)
function sceneOf(location) {
  return location.pathname + "|" + (new URLSearchParams(location.search).get("slide") || "");
}

export default function (component) {
  const { data } = component;
  const win = window;
  const doc = document;

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
    const stop = () => { win.__labScrollUntil = 0; };
    win.addEventListener("wheel", stop, { capture: true, passive: true });
    win.addEventListener("mousedown", stop, true);
    win.addEventListener("touchstart", stop, { capture: true, passive: true });
  }

  if (!data || !data.target || win.__labScrolledFor === data.token) return;
  const token = data.token;
  win.__labScrolledFor = token;
  // a cold server may take minutes to draw the result (models load on first use); a scroll, click
  // or touch by the presenter ends the wait
  win.__labScrollUntil = Date.now() + 600000;
  let found = 0;
  let idleSince = 0;
  const place = () => {
    // superseded by the next scene's arrival, or ended by the presenter
    if (win.__labScrolledFor !== token || Date.now() > win.__labScrollUntil) return;
    const target = doc.querySelector(`.st-key-${data.target}`);
    const bar = doc.querySelector(".st-key-present_bar");
    if (target && target.getBoundingClientRect().height > 0) {
      found = found || Date.now();
      const barBottom = bar ? bar.getBoundingClientRect().bottom : 0;
      const offset = target.getBoundingClientRect().top - barBottom - 8;
      if (Math.abs(offset) > 4) {
        target.style.scrollMarginTop = `${Math.max(barBottom, 0) + 8}px`;
        target.scrollIntoView({ block: "start", behavior: "instant" });
      }
      // keep it in place until the page has finished drawing: charts above it may still grow, and an
      // element of the previous scene on the same page may stand in for the new one at first
      idleSince = idle() ? idleSince || Date.now() : 0;
      if (Date.now() - found > 3000 && idleSince && Date.now() - idleSince > RESEND_IDLE_MS) return;
    }
    win.setTimeout(place, 250);
  };
  place();
}
