import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { ApiError } from './api.ts';
import { SessionProvider } from './session.tsx';
import { ModeProvider } from './mode.tsx';
import { App } from './app.tsx';
import './styles.css';

const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      // A refusal (401, 403, 404) will not change by asking again.
      retry: (count, err) => count < 2 && !(err instanceof ApiError && err.status >= 400 && err.status < 500),
      staleTime: 2_000,
      refetchOnWindowFocus: true,
    },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <SessionProvider>
        <ModeProvider>
          <App />
        </ModeProvider>
      </SessionProvider>
    </QueryClientProvider>
  </StrictMode>,
);
