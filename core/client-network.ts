/** A client instance's network facts, as the Fleet reports them (BeginPath records them in the manifest). */
import { z } from 'zod';

/** The client's network facts: instance type, AZ id, and its baseline / peak (burst) bandwidth in bit/s. */
export const clientNetworkSchema = z.object({
  instanceType: z.string().optional(),
  azId: z.string().optional(),
  /** Sustained bandwidth once the burst credits are spent (EC2 BaselineBandwidthInGbps; the lab's tbf rate). */
  baselineBps: z.number().optional(),
  /** Bandwidth while credits last (EC2 PeakBandwidthInGbps; the lab's tbf peakrate). */
  peakBps: z.number().optional(),
});
export type ClientNetwork = z.output<typeof clientNetworkSchema>;
