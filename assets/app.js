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
