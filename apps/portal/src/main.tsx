import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { App } from './app';
import { preloadPage } from './lazy-pages';
import { currentSession, PORTAL_BASE } from './session';
import './styles.css';

// Signed in, the page asked for is fetched alongside the shell's first API calls, not after.
if (currentSession() && location.pathname.startsWith(PORTAL_BASE))
  preloadPage(location.pathname.slice(PORTAL_BASE.length) || '/');

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
