/** A client instance's network facts, as the Fleet reports them (BeginPath records them in the manifest). */

/** The client's network facts: instance type, AZ id, and its baseline / peak (burst) bandwidth in bit/s. */
export interface ClientNetwork {
  instanceType?: string;
  azId?: string;
  /** Sustained bandwidth once the burst credits are spent (EC2 BaselineBandwidthInGbps; the lab's tbf rate). */
  baselineBps?: number;
  /** Bandwidth while credits last (EC2 PeakBandwidthInGbps; the lab's tbf peakrate). */
  peakBps?: number;
}
