// What the page document needs for assistive technology and that Streamlit's own index.html cannot know
// (a constant script: its data are the app's own translated strings, never user text).
// 1. <html lang> follows the app's language (Streamlit serves lang="en" on every page): screen readers pick
//    the voice from it, and the browser its hyphenation and CJK font.
// 2. The file uploader's button shows a translated label through CSS (ui/sentence_inputs.py) that a screen
//    reader does not read: it gets the same label as its accessible name.
// 3. A region that scrolls sideways (a wide formula, a wide table on a phone) can be focused, so that it can
//    be scrolled from the keyboard (WCAG 2.1.1).
// 4. Whether the window is narrow (a phone, a tablet in portrait, a narrow desktop window): the server never
//    learns the width, and ui.page.phone() stacks side-by-side subplots by it. Sent only when it changes (a
//    wide window sends nothing): each send reruns the script.
// 4b. Whether the window is tall (a 1920×1080 projector): the projector's heatmap then fills the room it has
//    (ui.page.tall()). Sent only when it changes, as the narrow report.
// 5. A chart's toolbar (its one button, the camera: ui.page.chart_config) leaves the Tab order: plotly makes
//    each button a Tab stop, one per chart between a page's controls; it shows on hover, for a mouse.
// 6. Streamlit's own English control names and input hints get the page language's (translate, below).
// 7. A chart's SVG is hidden from a screen reader: the chart's name (its summary, ui.page.chart) says what it shows.
// 8. Streamlit's chart and table code (data.preload: its PlotlyChart and DataFrame chunks, 6 MB) is loaded while the
//    server still computes the page's first result: Streamlit loads it only when the first chart arrives, and
//    compiling it then kept a first visitor's chart away another second (ui/accessibility.py, LIBRARY_CHUNKS).
// 9. A short Tab path to the page's main input (issue #54): the sidebar's page links are one Tab stop (the current
//    page's; ↑ ↓ Home End move between them, as in a toolbar, and the list says so), the main region is a target
//    of the skip link but no stop of its own, the headings' link icons (for a mouse) leave the Tab order, and the
//    skip link ("Skip to main content", translated) puts the focus into the page's main input (data.main: the keys
//    of the containers around it, the first found: ui.PageSpec.main_input), not on the region around the whole page.

const SCROLLERS = '.katex-display, [data-testid="stTable"] > div';
const UPLOAD_BUTTONS = '[data-testid="stFileUploaderDropzone"] button';
const NARROW = "(max-width: 700px)";  // as ui/phone_nav.js
const TALL = "(min-height: 960px)";
const CHART_TOOLBAR_BUTTONS = ".modebar-btn";
const NAV_LINKS = '[data-testid="stSidebarNav"] a[data-testid="stSidebarNavLink"]';
const HEADING_LINKS = '[data-testid="stHeaderActionElements"] a';
const SKIP_LINK = '[data-testid="stSkipToContent"]';
const MAIN = '[data-testid="stMain"]';
// what takes typing or a choice inside the main input's container, in the order tried
const INPUTS = ["textarea", 'input:not([type="hidden"]):not([disabled]):not([role="combobox"])', '[role="slider"]',
  '[role="combobox"]', "button"];
const NAV_KEYS = { ArrowDown: 1, ArrowRight: 1, ArrowUp: -1, ArrowLeft: -1 };

// Streamlit's own English names and hints, in the page's language (data.names: English -> translated; data.prefixes:
// the start of a name built from a label ("Help for …") -> the translated name around {label}; empty on an English
// page). A hint's text is changed in its own text node, which React keeps and may set again: marked again.
function translate(doc, names, prefixes) {
  doc.querySelectorAll("[aria-label], [data-title]").forEach((el) => {
    for (const attribute of ["aria-label", "data-title"]) {
      const value = el.getAttribute(attribute);
      const start = Object.keys(prefixes).find((english) => value && value.startsWith(english));
      const name = names[value] || (start && prefixes[start].replace("{label}", value.slice(start.length)));
      if (name) el.setAttribute(attribute, name);
    }
  });
  doc.querySelectorAll('[data-testid="InputInstructions"]').forEach((el) => {
    const walker = doc.createTreeWalker(el, NodeFilter.SHOW_TEXT);
    for (let node = walker.nextNode(); node; node = walker.nextNode()) {
      const name = names[node.nodeValue.trim()];
      if (name) node.nodeValue = name;
    }
  });
}

function mark(doc, data) {
  if (data.names) translate(doc, data.names, data.prefixes || {});
  doc.querySelectorAll(SCROLLERS).forEach((el) => {
    if (el.scrollWidth > el.clientWidth + 1) el.tabIndex = 0;
    else if (el.tabIndex === 0) el.removeAttribute("tabindex");
  });
  doc.querySelectorAll(UPLOAD_BUTTONS).forEach((el) => {
    if (el.getAttribute("aria-label") !== data.upload) el.setAttribute("aria-label", data.upload);
  });
  doc.querySelectorAll(`${CHART_TOOLBAR_BUTTONS}, ${HEADING_LINKS}, ${MAIN}`).forEach((el) => {
    if (el.tabIndex !== -1) el.tabIndex = -1;
  });
  const links = [...doc.querySelectorAll(NAV_LINKS)];
  const current = links.find((a) => a.getAttribute("aria-current") === "page") || links[0];
  links.forEach((a) => {
    const stop = a === current ? 0 : -1;
    if (a.tabIndex !== stop && a !== doc.activeElement) a.tabIndex = stop;
  });
  const list = links.length ? links[0].closest("ul") : null;
  if (list && data.navHint && list.getAttribute("aria-description") !== data.navHint) {
    list.setAttribute("aria-description", data.navHint);
  }
  const skip = doc.querySelector(SKIP_LINK);
  if (skip && data.skip && skip.textContent !== data.skip) skip.textContent = data.skip;
  // a chart's SVG read aloud is its ticks and labels one by one: the chart's name (its summary) says it instead
  doc.querySelectorAll(".js-plotly-plot .main-svg").forEach((el) => {
    if (el.getAttribute("aria-hidden") !== "true") el.setAttribute("aria-hidden", "true");
  });
}

export default function (component) {
  const { data } = component;
  const win = window;
  const doc = document;
  if (!data) return;
  doc.documentElement.lang = data.lang;
  if (!win.__labPreloaded) {
    win.__labPreloaded = true;
    // the chunks' URLs as Streamlit's own code resolves them: beside its entry module (any server path prefix kept)
    const entry = doc.querySelector('script[type="module"][src*="/static/js/index."]');
    for (const name of entry ? data.preload || [] : []) import(new URL(name, entry.src).href).catch(() => {});
  }
  win.__labDocumentData = data;
  win.__labDocumentComponent = component;
  const narrow = win.matchMedia(NARROW);
  const tall = win.matchMedia(TALL);
  const report = () => {
    if (narrow.matches !== Boolean(win.__labNarrowSent)) {
      win.__labNarrowSent = narrow.matches;
      win.__labDocumentComponent.setStateValue("narrow", narrow.matches);
    }
    if (tall.matches !== Boolean(win.__labTallSent)) {
      win.__labTallSent = tall.matches;
      win.__labDocumentComponent.setStateValue("tall", tall.matches);
    }
  };
  if (!win.__labNarrowListener) {
    win.__labNarrowListener = true;
    narrow.addEventListener("change", report);
    tall.addEventListener("change", report);
  }
  report();
  if (!win.__labDocumentObserver) {
    // elements come and go with every script run and window size: marked again once things settle
    let pending = 0;
    const later = () => {
      if (pending) return;
      pending = win.setTimeout(() => { pending = 0; mark(doc, win.__labDocumentData); }, 200);
    };
    win.__labDocumentObserver = new MutationObserver(later);
    win.__labDocumentObserver.observe(doc.body, { childList: true, subtree: true, characterData: true });
    win.addEventListener("resize", later);
    // the page links: arrows move between them (one Tab stop for the list)
    doc.addEventListener("keydown", (event) => {
      const link = event.target.closest && event.target.closest(NAV_LINKS);
      if (!link || event.altKey || event.ctrlKey || event.metaKey || event.shiftKey) return;
      const links = [...doc.querySelectorAll(NAV_LINKS)];
      const at = links.indexOf(link);
      const to = event.key === "Home" ? 0 : event.key === "End" ? links.length - 1
        : event.key in NAV_KEYS ? (at + NAV_KEYS[event.key] + links.length) % links.length : null;
      if (to === null) return;
      event.preventDefault();
      links.forEach((a, i) => { a.tabIndex = i === to ? 0 : -1; });
      links[to].focus();
    });
    // the skip link: into the page's main input (Streamlit's own handler would focus the whole main region)
    doc.addEventListener("click", (event) => {
      if (!event.target.closest || !event.target.closest(SKIP_LINK)) return;
      const box = (win.__labDocumentData.main || []).map((key) => doc.querySelector(`.st-key-${key}`)).find(Boolean);
      const shown = (el) => el.offsetParent !== null;
      const input = box ? INPUTS.map((kind) => [...box.querySelectorAll(kind)].find(shown)).find(Boolean) : null;
      if (!input) return;
      event.preventDefault();
      event.stopImmediatePropagation();
      input.focus();
      input.scrollIntoView({ block: "center" });
    }, true);
  }
  mark(doc, data);
}
