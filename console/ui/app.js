// The console app: login, navigation between pages (URL fragments such
// as #/keys), and the session every page works in.
import { h, replace, form } from './dom.js';
import { api, session } from './api.js';
import { home } from './home.js';
import { keys } from './keys.js';
import { models } from './models.js';
import { playground } from './playground.js';
import { usage } from './usage.js';
import { channels } from './channels.js';
import { users, account } from './users.js';

const PAGES = {
  home: { title: 'Home', render: home },
  keys: { title: 'Keys', render: keys },
  models: { title: 'Models', render: models },
  playground: { title: 'Playground', render: playground },
  usage: { title: 'Usage', render: usage },
  channels: { title: 'Channels', render: channels, admin: true },
  users: { title: 'Users', render: users, admin: true },
  account: { title: 'Account', render: account },
};

const main = document.getElementById('main');
const top = document.getElementById('top');
let me = null; // {user, csrf, public_url}
let shown = 0; // bumps on each navigation, so a slow page cannot overwrite a newer one
// lastUser is who was logged in before the login form showed (null on a
// fresh load): another user logging in starts on Home, not on that
// user's page.
let lastUser = null;

function showLogin(notice) {
  if (me) lastUser = me.user.name;
  me = null;
  top.hidden = true;
  window.onhashchange = null;
  document.getElementById('toast').textContent = ''; // the last user's news is not the next one's
  document.title = 'Log in · Rosetta console';
  const f = form({
    label: 'Log in',
    submit: 'Log in',
    fields: [
      { name: 'name', label: 'User name', autocomplete: 'username', required: true },
      { name: 'password', label: 'Password', type: 'password', autocomplete: 'current-password', required: true },
    ],
    onSubmit: async (v) => {
      const m = await api('POST', 'login', v);
      if (lastUser !== null && lastUser !== m.user.name) history.replaceState(null, '', '#/home');
      loggedIn(m);
    },
  });
  replace(main, h('section', { class: 'login card' },
    h('h1', {}, 'Rosetta console'),
    notice && h('p', { class: 'notice', role: 'status' }, notice),
    f));
  f.elements.namedItem('name').focus();
}

// loggedIn starts the app for a session: {user, csrf, public_url}.
function loggedIn(m) {
  me = m;
  session(m.csrf);
  top.hidden = false;
  document.getElementById('whoami').textContent = `${m.user.name} (${m.user.role})`;
  for (const a of document.querySelectorAll('#nav [data-admin]')) a.hidden = m.user.role !== 'admin';
  window.onhashchange = route;
  route();
}

async function route() {
  const name = location.hash.replace(/^#\/?/, '').split('?')[0];
  let page = PAGES[name] || PAGES.home;
  if (page.admin && me.user.role !== 'admin') page = { title: page.title, render: adminOnly };
  document.title = `${page.title} · Rosetta console`;
  for (const a of document.querySelectorAll('#nav a')) {
    if (a.getAttribute('href') === `#/${name || 'home'}`) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  closeMenu();
  const seq = ++shown;
  const view = h('div', { class: 'page' }, h('h1', {}, page.title));
  const ctx = { me, admin: me.user.role === 'admin', publicURL: me.public_url, relogin: loggedIn };
  try {
    await page.render(view, ctx);
  } catch (e) {
    view.append(h('p', { class: 'err', role: 'alert' }, `Could not load this page: ${e.message}`));
  }
  if (seq !== shown || !me) return;
  replace(main, view);
  main.focus({ preventScroll: true });
}

// adminOnly stands in for an admin's page when someone else opens it.
function adminOnly(view, ctx) {
  view.append(h('p', { class: 'notice', role: 'alert' },
    `Only an admin can open this page; you are logged in as ${ctx.me.user.name}, a ${ctx.me.user.role}. `,
    'Ask an admin if you need a change here, or go back ', h('a', { href: '#/home' }, 'Home'), '.'));
}

function closeMenu() {
  document.getElementById('menu-toggle').setAttribute('aria-expanded', 'false');
}

document.getElementById('menu-toggle').addEventListener('click', (ev) => {
  const open = ev.currentTarget.getAttribute('aria-expanded') !== 'true';
  ev.currentTarget.setAttribute('aria-expanded', String(open));
});

// The skip link must not change the fragment: fragments name pages here.
document.querySelector('.skip').addEventListener('click', (ev) => {
  ev.preventDefault();
  main.focus();
});

document.getElementById('logout').addEventListener('click', async () => {
  try { await api('POST', 'logout'); } catch { /* logged out either way */ }
  showLogin('You are logged out.');
  history.replaceState(null, '', '#/home'); // whoever logs in next starts at Home
});

async function start() {
  session('', () => { if (me) showLogin('Your session ended; please log in again.'); });
  let m;
  try {
    m = await api('GET', 'me');
  } catch (e) {
    if (e.status === 401) return showLogin();
    replace(main, h('p', { class: 'err', role: 'alert' }, `The console is not reachable: ${e.message}`));
    return;
  }
  loggedIn(m);
}

start();
