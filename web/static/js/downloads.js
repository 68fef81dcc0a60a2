// Download buttons. Every /download/... URL needs the API token, which a
// plain link cannot send: the button fetches the file with it (api.download),
// saves it under the server's file name, and says plainly what went wrong
// when the server refuses (its message names the cause).

import { download } from './api.js';
import { h, num } from './dom.js';

const size = (n) => (n >= 1024 * 1024 ? `${(n / 1024 / 1024).toFixed(1)} MB` : `${num(Math.max(1, Math.round(n / 1024)))} KB`);

/**
 * downloadButton is a button that downloads url, followed by a status line
 * (saved file, or the refusal as an alert). attrs go on the button (class,
 * title, data-*); the button stays focusable while it works.
 */
export function downloadButton(url, label, attrs = {}) {
  const status = h('span', { class: 'download-status', role: 'status', 'aria-live': 'polite' });
  let busy = false;
  const button = h('button', {
    ...attrs,
    type: 'button',
    class: ['download', attrs.class].filter(Boolean).join(' '),
    'data-url': url,
    onclick: async () => {
      if (busy) return;
      busy = true;
      button.setAttribute('aria-busy', 'true');
      status.className = 'download-status muted';
      status.setAttribute('role', 'status');
      status.textContent = 'Downloading…';
      try {
        const f = await download(url);
        status.className = 'download-status ok';
        status.dataset.filename = f.filename;
        status.textContent = `Saved ${f.filename} (${size(f.size)}).`;
      } catch (e) {
        status.className = 'download-status error-inline';
        status.setAttribute('role', 'alert');
        status.textContent = `Download failed: ${e.message}`;
      } finally {
        busy = false;
        button.removeAttribute('aria-busy');
      }
    },
  }, label);
  return h('span', { class: 'download-wrap' }, button, status);
}
