import { describe, expect, it } from 'vitest';
import { joinSmsParts } from '../../clients/device/index.ts';

const at = (s: number) => new Date(Date.UTC(2026, 10, 28, 9, 0, s)).toISOString();
const text = 'You have received Tk 1,250.00 from 01712345678. Ref 1a2b. TrxID BFC7XYZ789 at 28/11/2026 15:00';
const cut = [0, 40, 80, text.length];
const piece = (i: number) => text.slice(cut[i - 1], cut[i]);
const part = (index: number, over: Record<string, unknown> = {}) => ({
  device_message_id: `m-${index}`,
  sender: 'bKash',
  body: piece(index),
  received_at: at(10 - index),
  sim_slot: 0,
  part: { reference: 12, index, count: 3 },
  ...over,
});

describe('joinSmsParts', () => {
  it('joins a complete set out of order into one message in place of its first part: index order, no separator, earliest time, part 1 id, no part', () => {
    const whole = { device_message_id: 'w', sender: 'NAGAD', body: 'Money Received.', received_at: at(0), sim_slot: 1 };
    const out = joinSmsParts([part(3), whole, part(1), part(2)]);
    expect(out).toEqual([{ device_message_id: 'm-1', sender: 'bKash', body: text, received_at: at(7), sim_slot: 0 }, whole]);
  });

  it('leaves an incomplete set as its parts, with their headers, to forward', () => {
    const out = joinSmsParts([part(1), part(3)]);
    expect(out).toEqual([part(1), part(3)]);
  });

  it('a repeated part counts once', () => {
    const out = joinSmsParts([part(1), part(1, { device_message_id: 'again' }), part(2), part(3)]);
    expect(out).toHaveLength(1);
    expect(out[0]!.body).toBe(text);
  });

  it('the same reference from another sender, SIM slot or count is another set', () => {
    const out = joinSmsParts([part(1), part(2, { sender: 'BKASH' }), part(3), part(2, { sim_slot: 1 }), part(2, { part: { reference: 12, index: 2, count: 4 } })]);
    expect(out.every((m) => m.part)).toBe(true);
    expect(out).toHaveLength(5);
  });

  it('messages without parts pass unchanged', () => {
    const m = [{ device_message_id: 'a', sender: 'bKash', body: 'x', received_at: at(1) }];
    expect(joinSmsParts(m)).toEqual(m);
  });
});
