/**
 * AWS regions and where they are, for mesh plans (`pathbench plan mesh`) and the lab mesh.
 *
 * Source: region codes and names as AWS lists them in "AWS Region billing codes" (AWS Global
 * Infrastructure documentation, as of 2025); each region's coordinates are those of the city or
 * metro area AWS names for it (city centre, two decimals, from the city's public geographic
 * record), not of any data centre, whose sites AWS does not publish. Distances from them are
 * great-circle distances between metro areas: good to a few tens of kilometres, which is far
 * below what routing adds (docs/data.md, "Plan file").
 *
 * Pure data and arithmetic: the core imports nothing that touches the world.
 */

/** The partitions a region belongs to: the commercial one, GovCloud (US), China, the EU sovereign cloud. */
export type Partition = 'aws' | 'aws-us-gov' | 'aws-cn' | 'aws-eusc';

export interface Region {
  code: string;
  name: string;
  /** The city or metro area AWS names for the region. */
  city: string;
  lat: number;
  lon: number;
  partition: Partition;
}

const r = (
  code: string,
  name: string,
  city: string,
  lat: number,
  lon: number,
  partition: Partition = 'aws',
): Region => ({
  code,
  name,
  city,
  lat,
  lon,
  partition,
});

/** Every region in the table, commercial first (the order `--regions all` uses). */
export const REGIONS: readonly Region[] = [
  r('us-east-1', 'US East (N. Virginia)', 'Ashburn, Virginia', 39.04, -77.49),
  r('us-east-2', 'US East (Ohio)', 'Columbus, Ohio', 39.96, -83.0),
  r('us-west-1', 'US West (N. California)', 'San Jose, California', 37.34, -121.89),
  r('us-west-2', 'US West (Oregon)', 'Boardman, Oregon', 45.84, -119.7),
  r('ca-central-1', 'Canada (Central)', 'Montreal', 45.5, -73.57),
  r('ca-west-1', 'Canada West (Calgary)', 'Calgary', 51.05, -114.07),
  r('mx-central-1', 'Mexico (Central)', 'Querétaro', 20.59, -100.39),
  r('sa-east-1', 'South America (São Paulo)', 'São Paulo', -23.55, -46.63),
  r('af-south-1', 'Africa (Cape Town)', 'Cape Town', -33.92, 18.42),
  r('ap-east-1', 'Asia Pacific (Hong Kong)', 'Hong Kong', 22.32, 114.17),
  r('ap-east-2', 'Asia Pacific (Taipei)', 'Taipei', 25.03, 121.57),
  r('ap-northeast-1', 'Asia Pacific (Tokyo)', 'Tokyo', 35.68, 139.69),
  r('ap-northeast-2', 'Asia Pacific (Seoul)', 'Seoul', 37.57, 126.98),
  r('ap-northeast-3', 'Asia Pacific (Osaka)', 'Osaka', 34.69, 135.5),
  r('ap-south-1', 'Asia Pacific (Mumbai)', 'Mumbai', 19.08, 72.88),
  r('ap-south-2', 'Asia Pacific (Hyderabad)', 'Hyderabad', 17.39, 78.49),
  r('ap-southeast-1', 'Asia Pacific (Singapore)', 'Singapore', 1.35, 103.82),
  r('ap-southeast-2', 'Asia Pacific (Sydney)', 'Sydney', -33.87, 151.21),
  r('ap-southeast-3', 'Asia Pacific (Jakarta)', 'Jakarta', -6.21, 106.85),
  r('ap-southeast-4', 'Asia Pacific (Melbourne)', 'Melbourne', -37.81, 144.96),
  r('ap-southeast-5', 'Asia Pacific (Malaysia)', 'Kuala Lumpur', 3.14, 101.69),
  r('ap-southeast-6', 'Asia Pacific (New Zealand)', 'Auckland', -36.85, 174.76),
  r('ap-southeast-7', 'Asia Pacific (Thailand)', 'Bangkok', 13.76, 100.5),
  r('eu-central-1', 'Europe (Frankfurt)', 'Frankfurt', 50.11, 8.68),
  r('eu-central-2', 'Europe (Zurich)', 'Zurich', 47.38, 8.54),
  r('eu-west-1', 'Europe (Ireland)', 'Dublin', 53.35, -6.26),
  r('eu-west-2', 'Europe (London)', 'London', 51.51, -0.13),
  r('eu-west-3', 'Europe (Paris)', 'Paris', 48.86, 2.35),
  r('eu-south-1', 'Europe (Milan)', 'Milan', 45.46, 9.19),
  r('eu-south-2', 'Europe (Spain)', 'Zaragoza (Aragón)', 41.65, -0.88),
  r('eu-north-1', 'Europe (Stockholm)', 'Stockholm', 59.33, 18.07),
  r('il-central-1', 'Israel (Tel Aviv)', 'Tel Aviv', 32.09, 34.78),
  r('me-south-1', 'Middle East (Bahrain)', 'Manama', 26.23, 50.59),
  r('me-central-1', 'Middle East (UAE)', 'Dubai', 25.2, 55.27),
  r('us-gov-west-1', 'AWS GovCloud (US-West)', 'Oregon (GovCloud)', 45.6, -121.18, 'aws-us-gov'),
  r('us-gov-east-1', 'AWS GovCloud (US-East)', 'Ohio (GovCloud)', 40.1, -82.8, 'aws-us-gov'),
  r('cn-north-1', 'China (Beijing)', 'Beijing', 39.9, 116.41, 'aws-cn'),
  r('cn-northwest-1', 'China (Ningxia)', 'Zhongwei, Ningxia', 37.51, 105.19, 'aws-cn'),
  r('eusc-de-east-1', 'AWS European Sovereign Cloud (Germany)', 'Brandenburg', 52.41, 12.53, 'aws-eusc'),
];

/** The regions of the commercial partition (one account reaches them all). */
export const COMMERCIAL_REGIONS: readonly Region[] = REGIONS.filter((x) => x.partition === 'aws');

export function regionByCode(code: string): Region | undefined {
  return REGIONS.find((x) => x.code === code);
}

/** Mean Earth radius, km (IUGG). */
export const EARTH_RADIUS_KM = 6371.0088;

/**
 * Great-circle distance in km by the haversine formula (stable for short and antipodal-ish
 * distances alike at this precision). Hand-written: five lines of trigonometry need no library.
 */
export function greatCircleKm(a: { lat: number; lon: number }, b: { lat: number; lon: number }): number {
  const rad = Math.PI / 180;
  const dLat = (b.lat - a.lat) * rad;
  const dLon = (b.lon - a.lon) * rad;
  const h = Math.sin(dLat / 2) ** 2 + Math.cos(a.lat * rad) * Math.cos(b.lat * rad) * Math.sin(dLon / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(h)));
}

/** Light in fibre: about 2/3 of c (refractive index ≈ 1.47), km per millisecond. */
export const FIBRE_KM_PER_MS = 299_792.458 / 1.47 / 1000;

/**
 * Round-trip propagation time over fibre for a great-circle distance, with a route factor for
 * how much longer real cable routes are than the great circle (default 1.5: the middle of the
 * 1.3–2 range published for intercontinental and terrestrial routes).
 */
export function fibreRttMs(distanceKm: number, routeFactor = 1.5): number {
  return (2 * distanceKm * routeFactor) / FIBRE_KM_PER_MS;
}
