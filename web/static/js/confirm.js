// A confirmation before something that cannot be taken back (revoking a
// token, disabling an account): a modal <dialog>, so focus stays in it and
// Escape cancels. Cancel comes first and has the focus, so an Enter pressed
// out of habit never confirms.

import { h } from './dom.js';

let uid = 0;

/**
 * confirmDialog asks a question and resolves to true only when the confirm
 * button is chosen. body: text or nodes. Leaving the page cancels it.
 */
export function confirmDialog({ title, body, confirm = 'OK', cancel = 'Cancel', danger = false }) {
  return new Promise((resolve) => {
    const id = `confirm-${++uid}`;
    const dialog = h('dialog', { class: 'confirm', id, 'aria-labelledby': `${id}-title`, 'aria-describedby': `${id}-body` },
      h('form', { method: 'dialog' },
        h('h2', { id: `${id}-title` }, title),
        h('div', { id: `${id}-body`, class: 'confirm-body' }, body),
        h('div', { class: 'form-actions' },
          h('button', { type: 'submit', value: 'cancel', class: 'confirm-cancel', autofocus: true }, cancel),
          h('button', { type: 'submit', value: 'ok', class: `confirm-ok${danger ? ' danger' : ''}` }, confirm))));
    const leave = () => dialog.close('cancel');
    dialog.addEventListener('close', () => {
      window.removeEventListener('hashchange', leave);
      const ok = dialog.returnValue === 'ok';
      dialog.remove();
      resolve(ok);
    });
    window.addEventListener('hashchange', leave);
    document.body.append(dialog);
    dialog.showModal();
  });
}
