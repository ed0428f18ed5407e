// Users (admins) and Account (everyone: change your password).
import { h, replace, form, table, confirmButton, announce, fmtTime, badge } from './dom.js';
import { api } from './api.js';

const ROLES = [['user', 'user: manages own keys'], ['admin', 'admin: all keys, users and channels']];

export async function users(view, ctx) {
  const page = { ctx, listBox: h('div'), editBox: h('div') };
  page.refresh = async () => {
    const { users: all } = await api('GET', 'users');
    replace(page.listBox, userTable(all, page));
  };
  const add = form({
    label: 'Add a user',
    submit: 'Add user',
    grid: true,
    fields: [
      { name: 'name', label: 'User name', required: true, help: 'Letters, digits and . _ @ -' },
      { name: 'password', label: 'Password', type: 'password', autocomplete: 'new-password', required: true, help: 'At least 8 characters.' },
      { name: 'role', label: 'Role', type: 'select', value: 'user', options: ROLES },
    ],
    onSubmit: async (v, f) => {
      await api('POST', 'users', v);
      f.reset();
      announce(`User ${v.name} added`);
      await page.refresh();
    },
  });
  view.append(page.listBox, page.editBox,
    h('section', { class: 'card', 'aria-labelledby': 'add-user' }, h('h2', { id: 'add-user' }, 'Add a user'), add));
  await page.refresh();
}

function userTable(all, page) {
  return table(`${all.length} user${all.length === 1 ? '' : 's'}`, ['Name', 'Role', 'Status', 'Created', 'Actions'],
    all.map((u) => [u.name, u.role, u.disabled ? badge('disabled', 'bad') : badge('active', 'ok'), fmtTime(u.created),
      h('div', { class: 'actions' }, userActions(u, page))]));
}

function userActions(u, page) {
  if (u.id === page.ctx.me.user.id) return [h('span', { class: 'muted' }, 'you — see Account')];
  return [
    h('button', { type: 'button', 'aria-label': `Edit user ${u.name}`, onclick: () => editUser(u, page) }, 'Edit'),
    confirmButton('Delete', 'Confirm delete', async () => {
      await api('DELETE', `users/${u.id}`);
      announce(`User ${u.name} deleted, with their keys`);
      await page.refresh();
    }, `Delete user ${u.name} and their keys`),
  ];
}

function editUser(u, page) {
  const f = form({
    label: `Edit user ${u.name}`,
    submit: 'Save user',
    fields: [
      { name: 'name', label: 'User name', value: u.name, required: true },
      { name: 'password', label: 'New password', type: 'password', autocomplete: 'new-password', help: 'Leave empty to keep the password. A new one logs the user out everywhere.' },
      { name: 'role', label: 'Role', type: 'select', value: u.role, options: ROLES },
      { name: 'disabled', label: 'Disabled (cannot log in)', type: 'checkbox', value: u.disabled },
    ],
    onSubmit: async (v) => {
      const body = { name: v.name, role: v.role, disabled: v.disabled };
      if (v.password) body.password = v.password;
      await api('PATCH', `users/${u.id}`, body);
      replace(page.editBox);
      announce(`User ${v.name} saved`);
      await page.refresh();
    },
  });
  f.querySelector('.actions').append(h('button', { type: 'button', onclick: () => replace(page.editBox) }, 'Cancel'));
  replace(page.editBox, h('section', { class: 'card', 'aria-label': `Edit user ${u.name}` }, h('h2', {}, `Edit user “${u.name}”`), f));
  f.elements.namedItem('name').focus();
}

export async function account(view, ctx) {
  const f = form({
    label: 'Change your password',
    submit: 'Change password',
    fields: [
      { name: 'current_password', label: 'Current password', type: 'password', autocomplete: 'current-password', required: true },
      { name: 'password', label: 'New password', type: 'password', autocomplete: 'new-password', required: true, help: 'At least 8 characters. Your other sessions end.' },
    ],
    onSubmit: async (v, form) => {
      const me = await api('POST', 'me/password', v);
      form.reset();
      announce('Password changed');
      ctx.relogin(me);
    },
  });
  view.append(h('section', { class: 'card' },
    h('p', {}, `Logged in as ${ctx.me.user.name}, role ${ctx.me.user.role}.`),
    h('h2', {}, 'Change your password'), f));
}
