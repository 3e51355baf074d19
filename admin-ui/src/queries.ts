import { useQuery } from '@tanstack/react-query';
import { api, ok } from './api.ts';

/** Every brand this operator sees (the server scopes the list); used by filters and pickers. */
export function useBrands() {
  return useQuery({
    queryKey: ['brands'],
    queryFn: async () => (await ok(api.brands.list({ query: { per_page: '100' } }))).data,
    staleTime: 60_000,
  });
}

/** A brand's name by id, for lists that carry only `brand_id`. */
export function useBrandName(): (id: number) => string {
  const brands = useBrands().data ?? [];
  return (id) => brands.find((b) => b.id === id)?.name ?? `Brand ${id}`;
}
