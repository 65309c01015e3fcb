import { MutationCache, QueryCache, QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { StrictMode } from 'react';
import { createRoot } from 'react-dom/client';
import { ApiError } from './api/client';
import { App } from './App';
import { ErrorBoundary } from './components/ErrorBoundary';
import { goToSignIn } from './lib/navigation';
import './styles.css';

// A 401 anywhere: back to sign-in, which returns to this page afterwards.
const onError = (error: Error) => {
  if (error instanceof ApiError && error.status === 401) goToSignIn();
};

const queryClient = new QueryClient({
  queryCache: new QueryCache({ onError }),
  mutationCache: new MutationCache({ onError }),
  defaultOptions: {
    // Errors are shown with a "try again" button rather than retried behind the person's back.
    queries: { retry: false, refetchOnWindowFocus: false, staleTime: 5_000 },
  },
});

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <QueryClientProvider client={queryClient}>
      <ErrorBoundary>
        <App />
      </ErrorBoundary>
    </QueryClientProvider>
  </StrictMode>,
);
