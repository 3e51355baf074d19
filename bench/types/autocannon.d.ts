// autocannon ships no type declarations; this covers the part bench/ uses
// (see node_modules/autocannon/README.md for the full option list).
declare module 'autocannon' {
  interface Histogram {
    average: number;
    mean: number;
    max: number;
    min: number;
    total: number;
    p50: number;
    p90: number;
    p99: number;
  }
  interface AutocannonResult {
    requests: Histogram;
    latency: Histogram;
    throughput: Histogram;
    errors: number;
    timeouts: number;
    non2xx: number;
    duration: number;
  }
  interface RequestSpec {
    setupRequest?: (req: Record<string, unknown>, context: Record<string, unknown>) => Record<string, unknown> | null;
    onResponse?: (status: number, body: string, context: Record<string, unknown>, headers: Record<string, string>) => void;
  }
  interface Options {
    /** Several: connections are spread over them in turn. */
    url: string | string[];
    connections?: number;
    duration?: number;
    timeout?: number;
    requests?: RequestSpec[];
  }
  function autocannon(opts: Options): Promise<AutocannonResult>;
  export default autocannon;
}
