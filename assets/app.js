// Progressive enhancement only: every page works without this file.
for (const button of document.querySelectorAll('[data-copy]')) {
  button.hidden = false;
  button.addEventListener('click', async () => {
    const source = document.getElementById(button.dataset.copy);
    await navigator.clipboard.writeText(source.textContent.trim());
    button.textContent = 'Copied';
    setTimeout(() => (button.textContent = 'Copy'), 2000);
  });
}

// "Select all" for a group of checkboxes (the webhook event types): shown only where it works.
for (const toggle of document.querySelectorAll('input[data-select-all]')) {
  const boxes = [...toggle.form.querySelectorAll(`input[type=checkbox][name="${toggle.dataset.selectAll}"]`)];
  const sync = () => {
    const checked = boxes.filter((box) => box.checked).length;
    toggle.checked = checked === boxes.length;
    toggle.indeterminate = checked > 0 && checked < boxes.length;
  };
  toggle.closest('label').hidden = false;
  toggle.addEventListener('change', () => {
    for (const box of boxes) box.checked = toggle.checked;
    sync();
  });
  for (const box of boxes) box.addEventListener('change', sync);
  sync();
}

// Browsers without ::details-content cannot show a closed <details> menu in full: open it on wide screens.
const menu = document.querySelector('details.menu');
if (menu && !CSS.supports('selector(::details-content)')) {
  const wide = matchMedia('(min-width: 1024px)');
  const sync = () => {
    menu.open = wide.matches;
    menu.classList.toggle('wide-open', wide.matches);
  };
  sync();
  wide.addEventListener('change', sync);
}
