import {
  BarController,
  BarElement,
  CategoryScale,
  Chart,
  Legend,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
} from "chart.js";
import { useEffect, useRef, useState } from "preact/hooks";
import { useLocation } from "preact-iso";
import { api, type UsageStatsRow } from "../api.js";
import { ErrorNote } from "../components/error-note.js";
import { countOf, formatNumber, formatUsd } from "../format.js";
import { useDocumentTitle } from "../use-document-title.js";

Chart.register(
  BarController,
  BarElement,
  CategoryScale,
  LinearScale,
  LineController,
  LineElement,
  PointElement,
  Tooltip,
  Legend,
);

const GROUPS = { day: "Day", model: "Model", source: "Source" } as const;

const cost = (r: UsageStatsRow) => r.actual_cost_usd ?? r.estimated_cost_usd;

/** Colours of the chart from the page's CSS variables (light or dark theme). */
function palette() {
  const css = getComputedStyle(document.documentElement);
  const v = (name: string) => css.getPropertyValue(name).trim();
  return {
    text: v("--fg"),
    grid: v("--border"),
    series: [v("--chart-1"), v("--chart-2"), v("--chart-3"), v("--chart-4")],
  };
}

function UsageChart({ rows }: { rows: UsageStatsRow[] }) {
  const canvas = useRef<HTMLCanvasElement>(null);
  useEffect(() => {
    if (!canvas.current) return;
    const p = palette();
    const labels = rows.map((r) => r.group ?? "(none)");
    const chart = new Chart(canvas.current, {
      data: {
        labels,
        datasets: [
          {
            type: "bar",
            label: "Input tokens",
            order: 1,
            data: rows.map((r) => r.input_tokens),
            backgroundColor: p.series[0],
            stack: "t",
          },
          {
            type: "bar",
            label: "Output tokens",
            order: 1,
            data: rows.map((r) => r.output_tokens),
            backgroundColor: p.series[1],
            stack: "t",
          },
          {
            type: "bar",
            label: "Cache read tokens",
            order: 1,
            data: rows.map((r) => r.cache_read_tokens),
            backgroundColor: p.series[2],
            stack: "t",
          },
          {
            type: "line",
            label: "Cost (USD)",
            data: rows.map((r) => cost(r) ?? 0),
            borderColor: p.series[3],
            backgroundColor: p.series[3],
            yAxisID: "cost",
            // Drawn over the bars (a lower order is drawn later): one day's cost is a single
            // point in the middle of its bar, which would otherwise hide it. Points are always
            // drawn, larger than a line's joints, so that a line of one point still shows.
            order: 0,
            pointRadius: 4,
            pointHoverRadius: 6,
          },
        ],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        color: p.text,
        scales: {
          x: { stacked: true, ticks: { color: p.text }, grid: { color: p.grid } },
          y: {
            stacked: true,
            ticks: { color: p.text },
            grid: { color: p.grid },
            title: { display: true, text: "tokens", color: p.text },
          },
          cost: {
            position: "right",
            ticks: { color: p.text, callback: (value) => formatUsd(Number(value)) },
            grid: { display: false },
            title: { display: true, text: "USD", color: p.text },
          },
        },
        plugins: {
          legend: { labels: { color: p.text } },
          tooltip: {
            callbacks: {
              label: (item) =>
                `${item.dataset.label}: ${item.dataset.yAxisID === "cost" ? formatUsd(item.parsed.y) : formatNumber(item.parsed.y)}`,
            },
          },
        },
      },
    });
    return () => chart.destroy();
  }, [rows]);
  return (
    <div class="chart">
      <canvas
        ref={canvas}
        role="img"
        aria-label="Tokens and cost per group; the same figures are in the table below"
      />
    </div>
  );
}

/** Tokens and cost by day, model or source: a chart and the table behind it. */
export function UsagePage() {
  useDocumentTitle("Usage");
  const { query, route } = useLocation();
  const groupBy =
    (query.group as keyof typeof GROUPS) in GROUPS ? (query.group as keyof typeof GROUPS) : "day";
  const from = query.from ?? "";
  const to = query.to ?? "";
  const [rows, setRows] = useState<UsageStatsRow[]>([]);
  const [error, setError] = useState<unknown>(null);
  useEffect(() => {
    api.usage({ groupBy, from, to }).then((res) => {
      setRows(res.rows);
      setError(null);
    }, setError);
  }, [groupBy, from, to]);
  const set = (patch: Record<string, string>) => {
    const next = new URLSearchParams(
      Object.entries({ group: groupBy, from, to, ...patch }).filter(([, v]) => v !== ""),
    ).toString();
    route(`/usage?${next}`, true);
  };
  const totals = rows.reduce(
    (t, r) => ({
      sessions: t.sessions + r.sessions,
      input: t.input + r.input_tokens,
      output: t.output + r.output_tokens,
      cost: t.cost + (cost(r) ?? 0),
    }),
    { sessions: 0, input: 0, output: 0, cost: 0 },
  );
  return (
    <section aria-labelledby="usage-heading">
      <h1 id="usage-heading">Usage</h1>
      <form class="filters" onSubmit={(e) => e.preventDefault()}>
        <label>
          Group by
          <select value={groupBy} onChange={(e) => set({ group: e.currentTarget.value })}>
            {Object.entries(GROUPS).map(([k, v]) => (
              <option key={k} value={k}>
                {v}
              </option>
            ))}
          </select>
        </label>
        <label>
          Started from
          <input type="date" value={from} onChange={(e) => set({ from: e.currentTarget.value })} />
        </label>
        <label>
          to
          <input type="date" value={to} onChange={(e) => set({ to: e.currentTarget.value })} />
        </label>
      </form>
      <ErrorNote error={error} />
      <p class="dim">
        {countOf(totals.sessions, "session")} · {formatNumber(totals.input)} input and{" "}
        {formatNumber(totals.output)} output tokens · {formatUsd(totals.cost)}
      </p>
      {rows.length > 0 ? <UsageChart rows={rows} /> : <p class="empty">No sessions in this range.</p>}
      <div class="table-wrap">
        <table>
          <caption>Usage by {GROUPS[groupBy].toLowerCase()}</caption>
          <thead>
            <tr>
              <th scope="col">{GROUPS[groupBy]}</th>
              <th scope="col">Sessions</th>
              <th scope="col">Messages</th>
              <th scope="col">Tool calls</th>
              <th scope="col">Input</th>
              <th scope="col">Output</th>
              <th scope="col">Cache read</th>
              <th scope="col">Cache write</th>
              <th scope="col">Reasoning</th>
              <th scope="col">Cost (est.)</th>
              <th scope="col">Cost (actual)</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.group ?? ""}>
                <th scope="row">{r.group ?? "(none)"}</th>
                <td>{formatNumber(r.sessions)}</td>
                <td>{formatNumber(r.messages)}</td>
                <td>{formatNumber(r.tool_calls)}</td>
                <td>{formatNumber(r.input_tokens)}</td>
                <td>{formatNumber(r.output_tokens)}</td>
                <td>{formatNumber(r.cache_read_tokens)}</td>
                <td>{formatNumber(r.cache_write_tokens)}</td>
                <td>{formatNumber(r.reasoning_tokens)}</td>
                <td>{formatUsd(r.estimated_cost_usd)}</td>
                <td>{formatUsd(r.actual_cost_usd)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </section>
  );
}
