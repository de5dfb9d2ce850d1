// Presentation mode in the browser (a constant script: nothing user-controlled is put into it).
// 1. Clicker keys always change the scene: PageDown / → next, PageUp / ← previous. They are caught
//    before any widget sees them, so a focused slider or select no longer eats them; in a text box
//    the arrows keep moving the caret, PageUp/PageDown still change the scene, Escape leaves the box.
// 2. On arrival in a scene, its result (data.target: a Streamlit key) is scrolled to just below the
//    sticky scene bar, once per arrival (data.token), and kept there while the page finishes drawing,
//    unless the presenter scrolls or clicks first.
export default function (component) {
  const { data } = component;
  const win = window;
  const doc = document;

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
      let direction = null;
      if (event.key === "PageDown" || (!typing && event.key === "ArrowRight")) direction = "next";
      if (event.key === "PageUp" || (!typing && event.key === "ArrowLeft")) direction = "prev";
      if (!direction) return;
      event.preventDefault();
      event.stopImmediatePropagation();
      if (el && el !== doc.body && el.blur) el.blur();
      const button = doc.querySelector(`.st-key-present_${direction} button`);
      if (button && !button.disabled) button.click();
    }, true);
    const stop = () => { win.__labScrollUntil = 0; };
    win.addEventListener("wheel", stop, { capture: true, passive: true });
    win.addEventListener("mousedown", stop, true);
    win.addEventListener("touchstart", stop, { capture: true, passive: true });
  }

  if (!data || !data.target || win.__labScrolledFor === data.token) return;
  win.__labScrolledFor = data.token;
  // a cold server may take minutes to draw the result (models load on first use); a scroll, click
  // or touch by the presenter ends the wait
  win.__labScrollUntil = Date.now() + 600000;
  let found = 0;
  const place = () => {
    if (Date.now() > win.__labScrollUntil) return;
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
      // keep it in place for a while: charts above it may still grow while the page draws
      if (Date.now() - found > 6000) return;
    }
    win.setTimeout(place, 250);
  };
  place();
}
