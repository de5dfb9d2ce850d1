// On a phone the sidebar lies over the page: close it once a page is chosen in it (Streamlit leaves it
// open, and the student sees the sidebar instead of the page they asked for). A constant script: nothing
// user-controlled is put into it. Registered once per browser tab.
const NARROW = "(max-width: 700px)";

export default function () {
  if (window.__labPhoneNav) return;
  window.__labPhoneNav = true;
  document.addEventListener("click", (event) => {
    const link = event.target.closest('[data-testid="stSidebarNav"] a');
    if (!link || !window.matchMedia(NARROW).matches) return;
    // after Streamlit's own handler has started the page switch
    window.setTimeout(() => {
      const close = document.querySelector('[data-testid="stSidebarCollapseButton"] button');
      if (close) close.click();
    }, 0);
  }, true);
}
