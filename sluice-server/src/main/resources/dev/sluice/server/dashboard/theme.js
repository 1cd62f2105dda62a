// Light and dark themes: the system's choice (prefers-color-scheme) until the toggle picks one, which is
// remembered in localStorage.

const KEY = 'sluice.theme';

function stored() {
  try {
    const t = localStorage.getItem(KEY);
    return t === 'light' || t === 'dark' ? t : null;
  } catch (e) {
    return null;
  }
}

function system() {
  return window.matchMedia && window.matchMedia('(prefers-color-scheme: dark)').matches ? 'dark' : 'light';
}

/** The theme in force. */
export function theme() {
  return document.documentElement.dataset.theme || stored() || system();
}

function apply(t, button) {
  document.documentElement.dataset.theme = t;
  button.textContent = t === 'dark' ? 'Light' : 'Dark';
  button.setAttribute('aria-label', 'Switch to the ' + (t === 'dark' ? 'light' : 'dark') + ' theme');
  button.dataset.theme = t;
}

/** Applies the stored or system theme and wires the toggle. */
export function initTheme(button) {
  apply(stored() || system(), button);
  button.addEventListener('click', () => {
    const next = theme() === 'dark' ? 'light' : 'dark';
    try {
      localStorage.setItem(KEY, next);
    } catch (e) {
      // storage refused: the choice lasts for this page
    }
    apply(next, button);
  });
  if (window.matchMedia) {
    window.matchMedia('(prefers-color-scheme: dark)').addEventListener('change', () => {
      if (!stored()) apply(system(), button);
    });
  }
}
