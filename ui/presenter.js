// Presentation mode in the browser (a constant script: nothing user-controlled is put into it). It guesses nothing:
// Python tells it (ui/presentation.py), and the decisions are ui/placement.mjs's (prepended to this script).
// - The bar's instance (data.role "bar") sends the clicker's presses as its "press" state: PageDown / PageUp always
//   change the scene, caught before any widget sees them; ← / → too, except where the focused widget uses them (a
//   slider, a text box's caret, radios, tabs): a lecturer nudging γ must not jump scenes. Escape leaves a text box.
//   Each press moves exactly one scene: a press while another is unanswered waits until Python tells it handled.
// - The told instance, drawn last in every run (data.role "told": the run has ended; in presentation mode and on a
//   student's page alike), says which scene the run
//   showed and which keys' values it changed. A scene just arrived at starts its result just below the sticky bar
//   (or the page top); after an edit, the result the touched input drives comes wholly into view, moving the page
//   as little as possible. The placement holds while the page finishes drawing (charts grow, stale elements go),
//   until the presenter scrolls, clicks, touches or types, or the next placement.

// focused widgets whose own ← / → do something (a slider's thumb is a visually hidden range input)
const ARROW_WIDGETS = 'input[type="range"], input[type="radio"], select, [role="slider"], [role="radio"], ' +
  '[role="tab"], [role="combobox"], [role="listbox"], [role="option"], [role="spinbutton"]';
const BAR = ".st-key-present_bar";
const PINNED = ".st-key-present_pinned"; // a page's row pinned under the bar (ui.presentation.PINNED_KEY)
// the presenter view's controls (app_pages/presenter): the clicker's presses are caught there as on the bar
const CONSOLE = ".st-key-presenter_console";
const MARGIN = 8; // px kept clear below the bar and above the screen's end

// the Streamlit keys of an element and of the elements around it, innermost first (key= gives class st-key-<key>)
// Whether the pinned row ``pinned`` stands above ``target`` on the screen once scrolled: the row's wrapper sticks
// within its own parent (the page, a section), over what follows the row there.
function pinnedAbove(pinned, target) {
  const within = pinned.parentElement && pinned.parentElement.parentElement;
  return !!within && within.contains(target)
    && !!(pinned.compareDocumentPosition(target) & Node.DOCUMENT_POSITION_FOLLOWING);
}

function keysAround(el) {
  const keys = [];
  for (let node = el; node && node.classList; node = node.parentElement) {
    for (const c of node.classList) if (c.startsWith("st-key-")) keys.push(c.slice(7));
  }
  return keys;
}

// what the eye sees of a result: its box, its charts' SVGs and their texts (legends and axis titles may reach past
// a chart's box)
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

function install(win, doc) {
  const lab = { queue: emptyQueue(), seen: { arrival: null, run: null }, touched: [], setPress: null,
                observer: null, presses: 0 };
  const presenting = () => !!doc.querySelector(BAR) || !!doc.querySelector(CONSOLE);
  const send = (press) => { if (press && lab.setPress) lab.setPress(press); };
  // unique across reloads of the page, so that Python never takes a new press for one it has handled
  const freshId = () => `${Date.now()}-${++lab.presses}`;

  const stopHolding = () => {
    if (lab.observer) lab.observer.disconnect();
    lab.observer = null;
  };
  // Place ``key``'s element ("top" / "nearest": placement.mjs's scrollDelta), and again whenever the page's content or
  // the element changes size, until stopHolding.
  lab.place = (key, how) => {
    stopHolding();
    const bar = doc.querySelector(BAR);
    // outside presentation mode (a student's page) an edit's result comes into view below Streamlit's header
    const header = doc.querySelector("header");
    if (!bar && !key) return;
    const apply = () => {
      const target = key && doc.querySelector(`.st-key-${key}`);
      if (!key) { // a scene without a result opens at the page top, however far down the last page was
        const scroller = scrollerOf(bar);
        if (scroller.scrollTop > 0) scroller.scrollTop = 0;
        return;
      }
      if (!target || target.getBoundingClientRect().height === 0) return;
      if (!watched.has(target)) {
        watched.add(target);
        observer.observe(target);
      }
      // a pinned row sticks under the bar above what follows it in the container around it; a result before it, or
      // outside that container, has the bar alone above it
      const pinned = [...doc.querySelectorAll(PINNED)].filter((el) => pinnedAbove(el, target)).pop();
      const above = bar ? bar.getBoundingClientRect().height
        : header ? Math.max(0, header.getBoundingClientRect().bottom) : 0;
      const band = { top: above + MARGIN + (pinned ? pinned.getBoundingClientRect().height : 0),
                     bottom: win.innerHeight - MARGIN };
      const by = scrollDelta(how === "top" ? target.getBoundingClientRect() : seenBox(target), band, how);
      if (by) scrollerOf(target).scrollBy({ top: by, behavior: "instant" });
    };
    const watched = new Set();
    const observer = new ResizeObserver(apply);
    const content = scrollerOf(bar || doc.querySelector(`.st-key-${key}`) || doc.body);
    observer.observe(content === doc.scrollingElement ? doc.body : content.firstElementChild || content);
    lab.observer = observer;
    apply();
  };

  // Python's end of a run: answer the pending press, then place what placement.mjs decides
  lab.told = (data) => {
    const reply = answered(lab.queue, data, freshId());
    lab.queue = reply.queue;
    send(reply.send);
    const decided = placement(lab.seen, data, lab.touched, data.drives, data.results);
    lab.seen = decided.seen;
    if (decided.place) {
      if (decided.place.how === "nearest") lab.touched = [];
      lab.place(decided.place.key, decided.place.how);
    }
  };

  // the presenter touches an input (pointer or key): remember which keys it lies in, for the run's end
  const touch = (event) => {
    stopHolding();
    if (!event.target || !event.target.closest) return;
    // a select's options open outside the widget: choosing one still belongs to the select touched to open them
    if (event.target.closest('[role="option"], [role="listbox"]')) return;
    lab.touched = event.target.closest(BAR) ? [] : keysAround(event.target);
  };
  win.addEventListener("pointerdown", touch, true);
  win.addEventListener("wheel", stopHolding, { capture: true, passive: true });
  win.addEventListener("touchstart", stopHolding, { capture: true, passive: true });
  // the presenter view's on-screen Previous / Next are presses too, sent and resent like the clicker's (a button's own
  // click can be lost to a rerun): the click stops here, before Streamlit's button sees it
  win.addEventListener("click", (event) => {
    const button = event.target && event.target.closest && event.target.closest(`${CONSOLE} button`);
    if (!button) return;
    const direction = button.closest(`${CONSOLE}_next`) ? "next" : button.closest(`${CONSOLE}_prev`) ? "prev" : null;
    if (!direction) return;
    event.preventDefault();
    event.stopImmediatePropagation();
    const reply = pressed(lab.queue, direction, freshId(), new URLSearchParams(win.location.search).get("slide"));
    lab.queue = reply.queue;
    send(reply.send);
  }, true);
  win.addEventListener("keydown", (event) => {
    if (!presenting()) { // a student's page: Enter in a sentence box is an edit; no clicker keys
      touch(event);
      return;
    }
    const el = doc.activeElement;
    const typing = !!el && (el.tagName === "TEXTAREA" || el.isContentEditable ||
      (el.tagName === "INPUT" && !["range", "checkbox", "radio", "button"].includes(el.type)));
    const plain = !(event.altKey || event.ctrlKey || event.metaKey || event.shiftKey);
    if (plain && event.key === "Escape" && typing) {
      el.blur();
      return;
    }
    const ownsArrows = typing || (!!el && !!el.matches && el.matches(ARROW_WIDGETS));
    let direction = null;
    if (plain && (event.key === "PageDown" || (!ownsArrows && event.key === "ArrowRight"))) direction = "next";
    if (plain && (event.key === "PageUp" || (!ownsArrows && event.key === "ArrowLeft"))) direction = "prev";
    if (!direction) {
      touch(event); // a key in an input (Enter in a sentence box, an arrow on a slider) is an edit
      return;
    }
    event.preventDefault();
    event.stopImmediatePropagation();
    if (el && el !== doc.body && el.blur) el.blur();
    lab.touched = []; // what was touched before the press drives nothing on the next scene
    const reply = pressed(lab.queue, direction, freshId(), new URLSearchParams(win.location.search).get("slide"));
    lab.queue = reply.queue;
    send(reply.send);
  }, true);
  return lab;
}

export default function (component) {
  const { data } = component;
  const win = window;
  const lab = win.__labPresenter || (win.__labPresenter = install(win, document));
  if (!data) return;
  if (data.role === "bar") lab.setPress = (press) => component.setStateValue("press", press);
  else lab.told(data);
}
