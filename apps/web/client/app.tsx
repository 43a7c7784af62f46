import { ErrorBoundary, LocationProvider, lazy, Route, Router, useLocation } from "preact-iso";
import { NotFound } from "./components/not-found.js";
import { ConversationPage } from "./pages/conversation-page.js";
import { LivePage } from "./pages/live-page.js";
import { SearchPage } from "./pages/search-page.js";
import { SessionsPage } from "./pages/sessions-page.js";

// The chart library loads with the Usage page only.
const UsagePage = lazy(() => import("./pages/usage-page.js").then((m) => m.UsagePage));

const NAV = [
  ["/", "Sessions"],
  ["/search", "Search"],
  ["/usage", "Usage"],
  ["/live", "Live"],
] as const;

function Header() {
  const { path } = useLocation();
  const current = (href: string) =>
    href === "/" ? path === "/" || path.startsWith("/session/") : path.startsWith(href);
  return (
    <header class="top">
      <a class="skip" href="#main">
        Skip to content
      </a>
      <span class="brand">Hermes sessions</span>
      <nav aria-label="Pages">
        {NAV.map(([href, label]) => (
          <a key={href} href={href} aria-current={current(href) ? "page" : undefined}>
            {label}
          </a>
        ))}
      </nav>
    </header>
  );
}

function NoSuchPage() {
  return <NotFound heading="Page not found">There is no page at this address.</NotFound>;
}

/** The session browser: a header, and the page the address names (routed in the browser). */
export function App() {
  return (
    <LocationProvider>
      <Header />
      <main id="main" tabIndex={-1}>
        <ErrorBoundary>
          <Router>
            <Route path="/" component={SessionsPage} />
            <Route path="/search" component={SearchPage} />
            <Route path="/session/:id" component={ConversationPage} />
            <Route path="/usage" component={UsagePage} />
            <Route path="/live" component={LivePage} />
            <Route default component={NoSuchPage} />
          </Router>
        </ErrorBoundary>
      </main>
    </LocationProvider>
  );
}
