import { html, SafeHtml } from './html.js';

/**
 * A message at the top of a rendered page, under its title: a form's notice
 * (a repeated submission) or error (the API key limit), for pages whose view
 * has no slot of its own for one. The title is the layout's only `</h1>`.
 */
export function withAlert(page: SafeHtml, kind: 'notice' | 'error', message: string | undefined): SafeHtml {
  if (!message) return page;
  const alert = kind === 'error' ? html`<p class="error" role="alert">${message}</p>` : html`<p class="notice" role="status">${message}</p>`;
  const at = page.value.indexOf('</h1>') + '</h1>'.length;
  return new SafeHtml(page.value.slice(0, at) + alert.value + page.value.slice(at));
}
