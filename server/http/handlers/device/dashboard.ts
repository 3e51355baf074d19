import { initServer } from '@ts-rest/express';
import { contract } from '../../../../contract/index.ts';
import type { TransactionStatus } from '../../../../contract/vocabulary.ts';
import { getDashboard } from '../../../domain/devices/dashboard.ts';
import { deviceOf } from '../../context.ts';

const s = initServer();

export const deviceDashboardHandlers = s.router(contract.device.dashboard, {
  get: async ({ req }) => {
    const d = await getDashboard(req.db, deviceOf(req));
    return {
      status: 200,
      body: {
        success: true,
        data: {
          today: {
            date: d.today.date,
            timezone: d.today.timezone,
            revenue: d.today.revenue,
            currency: d.today.currency,
            revenue_by_currency: d.today.revenueByCurrency,
            total: d.today.total,
            pending: d.today.pending,
          },
          recent_transactions: d.recentTransactions.map((r) => ({
            trx_id: r.trxId,
            amount: r.amount,
            currency: r.currency,
            // The response schema checks the value; the database CHECK holds the same set.
            status: r.status as TransactionStatus,
            gateway: r.gateway,
            created_at: r.createdAt.toISOString(),
          })),
          unread_notifications: d.unreadNotifications,
          server_time: d.serverTime.toISOString(),
        },
      },
    };
  },
});
