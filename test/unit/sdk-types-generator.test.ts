import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { renderSdkTypes } from '../../scripts/sdk-types/generate.ts';
import { colouredWidgetContract, widgetContract } from '../fixtures/sdk-types/contract.ts';

/*
 * The SDKs' published types are printed from the contract by the compiler: a
 * contract change changes them, and nothing in them names a ts-rest or zod type.
 */
const root = path.resolve(import.meta.dirname, '../..');
const out = path.join(root, 'test/fixtures/sdk-types/api.generated.ts');
const render = (exportName: string, router: typeof widgetContract | typeof colouredWidgetContract) => {
  process.chdir(root);
  return renderSdkTypes({ contractModule: 'test/fixtures/sdk-types/contract.ts', contractExport: exportName, router, prefix: 'Widget' }, out);
};

describe('SDK type generator', () => {
  it('prints named models, params and resource methods from the contract', { timeout: 120_000 }, () => {
    const text = render('widgetContract', widgetContract);
    expect(text).toContain('export interface Widget {\n  id: string;\n  /** Decimal string. */\n  price: string;\n  size: "s" | "m";\n}');
    expect(text).toContain('export interface CreateWidgetRequest {\n  price: string;\n  size?: "s" | "m" | undefined;\n}');
    expect(text).toContain('create(params: CreateWidgetRequest, options?: O): Promise<WithResponse<Widget>>;');
    expect(text).toContain('retrieve(widgetId: string | number, options?: O): Promise<WithResponse<Widget>>;');
    expect(text).toMatch(/A widget\n\s+\*\n\s+\* `GET \/widgets\/:widget_id`\n\s+\*\/\n\s+retrieve\(/);
    expect(text).toMatch(/@deprecated Use `widgets.retrieve` \(same call\)\.\s*\*\/\s*get\(widgetId: string \| number, options\?: O\)/);
    expect(text).toContain('(params?: WidgetsListParams, options?: O): Promise<WithResponse<Page<Widget, PageMeta>>>;');
    expect(text).toContain('items(params?: WidgetsListParams, options?: O): AsyncIterable<Widget>;');
    expect(text).toContain('del(widgetId: string | number, options?: O): Promise<WithResponse<void>>;');
    expect(text).toContain('export interface WidgetResources<O = RequestOptions> {\n  widgets: WidgetsResource<O>;\n}');
    expect(text).not.toMatch(/ts-rest|from 'zod'|Zod/);

    const coloured = render('colouredWidgetContract', colouredWidgetContract);
    expect(coloured).toContain('  size: "s" | "m";\n  colour: string | null;\n}');
  });
});
