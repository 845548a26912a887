/**
 * A chart drawn by uPlot (bundled from npm; its stylesheet goes into main.css). uPlot sizes its
 * elements through the CSSOM (`el.style.x = ...`), which the console's CSP (`style-src 'self'`)
 * allows; it writes no inline `style` attribute or `<style>` element. The chart follows its box's
 * width. Under the canvas, a visually hidden table gives the same numbers to screen readers.
 */
import { useEffect, useRef } from 'preact/hooks';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

export interface ChartSeries {
  label: string;
  values: (number | null)[];
  color: string;
  /** Bars instead of a line. */
  bars?: boolean;
  /** A line holding each value until the next (levels such as concurrent calls). */
  stepped?: boolean;
}

export interface ChartProps {
  /** The chart's name for assistive technology, and the table caption. */
  label: string;
  /** Unix seconds when `time`, else category positions 0..n-1 named by `categories`. */
  x: number[];
  series: ChartSeries[];
  time?: boolean;
  categories?: string[];
  /** Formats a y value (axis and legend), e.g. `%`. */
  unit?: (v: number) => string;
  /** Fixed y range; default from 0 to the data's top. */
  yRange?: [number, number];
  /** Counts: y ticks on whole numbers only. */
  integer?: boolean;
  height?: number;
  /** A visible caption above the plot. */
  caption?: string;
}

const WIDTH_FALLBACK = 600;
const INTEGER_STEPS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 20_000, 50_000, 100_000];

export function Chart(props: ChartProps) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const data = [props.x, ...props.series.map((s) => s.values)] as uPlot.AlignedData;
    const plot = new uPlot(plotOptions(props, el.clientWidth || WIDTH_FALLBACK), data, el);
    const resize = new ResizeObserver(() => {
      const w = el.clientWidth;
      if (w > 0 && w !== plot.width) plot.setSize({ width: w, height: plot.height });
    });
    resize.observe(el);
    return () => {
      resize.disconnect();
      plot.destroy();
    };
  }, [props.x, props.series, props.categories, props.time, props.yRange, props.integer]);

  return (
    <figure class="chart" data-chart={props.label}>
      {props.caption && <figcaption>{props.caption}</figcaption>}
      <div ref={box} class="chart-plot" role="img" aria-label={props.label} />
      <ChartTable {...props} />
    </figure>
  );
}

/** uPlot's options for the chart: scales, axes (times in UTC, category names), one series each. */
function plotOptions(props: ChartProps, width: number): uPlot.Options {
  const fmt = props.unit ?? ((v: number) => String(v));
  const cats = props.categories;
  return {
    width,
    // times on the axes in UTC, like every time the console shows
    tzDate: (ts) => uPlot.tzDate(new Date(ts * 1000), 'Etc/UTC'),
    height: props.height ?? 200,
    scales: {
      x: { time: props.time ?? false, ...(cats ? { range: [-0.5, cats.length - 0.5] as uPlot.Range.MinMax } : {}) },
      y: { range: (_u, _min, max) => props.yRange ?? [0, Math.max(1, max)] },
    },
    axes: [
      cats ? { values: (_u, splits) => splits.map((s) => cats[s] ?? ''), incrs: [1] } : {},
      { values: (_u, splits) => splits.map(fmt), size: 70, ...(props.integer ? { incrs: INTEGER_STEPS } : {}) },
    ],
    legend: { live: true },
    cursor: { drag: { x: false, y: false } },
    series: [
      { value: cats ? (_u, v) => cats[v] ?? '' : undefined },
      ...props.series.map<uPlot.Series>((s) => ({
        label: s.label,
        stroke: s.color,
        width: 2,
        fill: s.bars ? s.color : undefined,
        paths: s.bars ? uPlot.paths.bars!({ size: [0.7, 60] }) : s.stepped ? uPlot.paths.stepped!({ align: 1 }) : undefined,
        // a sparse line (a ratio of the buckets that had calls) shows its points and joins them
        points: { show: !s.bars && s.values.filter((v) => v !== null).length < 60, size: 6 },
        spanGaps: !s.bars,
        value: (_u, v) => (v === null || v === undefined ? '—' : fmt(v)),
      })),
    ],
  };
}

/** The chart's numbers as a visually hidden table, for screen readers. */
function ChartTable(props: ChartProps) {
  const fmt = props.unit ?? ((v: number) => String(v));
  const xLabel = (x: number, i: number) => (props.categories ? (props.categories[i] ?? '') : props.time ? new Date(x * 1000).toISOString().replace('T', ' ').slice(0, 16) : String(x));
  return (
    <div class="visually-hidden">
      <table>
        <caption>{props.label}</caption>
        <thead>
          <tr>
            <th scope="col">{props.time ? 'Time' : 'Bin'}</th>
            {props.series.map((s) => (
              <th scope="col">{s.label}</th>
            ))}
          </tr>
        </thead>
        <tbody>
          {props.x.map((x, i) => (
            <tr>
              <th scope="row">{xLabel(x, i)}</th>
              {props.series.map((s) => (
                <td>{s.values[i] === null || s.values[i] === undefined ? '—' : fmt(s.values[i]!)}</td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
