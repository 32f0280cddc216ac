/**
 * The seed-002 testbed (`cdk deploy -c testbed=seed-002`): service-to-service paths inside one
 * region, measured from a task of a client ECS service (docs/aws.md, "Clients inside an ECS task").
 *
 * - VPCs: client 10.0.0.0/16 (two AZs), server 10.2.0.0/16 (VPC peering), TGW server
 *   10.3.0.0/16 (Transit Gateway). Each has one NAT gateway: the hosts reach ECS and pull the
 *   public node image through it.
 * - One ECS cluster with EC2 capacity: one Auto Scaling group of one host per service (c6i.large,
 *   ECS-optimized AL2023), each host tagged with the ECS attribute `pathbench-host=<name>` and each
 *   service placed by a `memberOf` constraint on it — every server on its own host, as the seed.
 *   Not ECS Managed Instances: aws-cdk-lib has its capacity provider, but it picks instance types
 *   from attribute requirements and places tasks itself, so neither the instance type (the NIC
 *   ceiling the HTTP probe warns at) nor one known host per service could be pinned.
 * - Servers (awsvpc): A, L1 (client VPC, first AZ), L2 (client VPC, second AZ), B, D, G, H
 *   (server VPC), F (TGW VPC); each runs `agent.cjs serve` (HTTP 8080, TCP 7000).
 * - D: a Service Connect namespace; the D server publishes `backend:8080`, the client service joins
 *   as a client (Envoy on both sides). G / G′: an internal NLB in the server VPC (IP target: the G
 *   server), its endpoint service and an interface endpoint in the client VPC. H: a VPC Lattice
 *   service network (associated with the client VPC) and service, HTTP listener → IP target group
 *   the H server registers in (ECS `VpcLatticeConfigurations`).
 * - The client service (desired count 1) runs the task client with its own queue
 *   `pathbench-client-<cluster>-<service>`, a task role that may only receive/delete its queue,
 *   read specs, write raw output under its own `client=<service>/` prefix and
 *   SendTaskSuccess/Failure/Heartbeat on the measurement state machine.
 * - Containers are `public.ecr.aws/docker/library/node:20-slim` (no image build): an init
 *   container (`public.ecr.aws/aws-cli/aws-cli`) copies the bundles (CDK file assets
 *   dist/agent.cjs, dist/ecs-worker.cjs) from S3 into a shared volume.
 *
 * `pathbench plan from-testbed --outputs FILE` turns its outputs into the nine-path plan
 * (infra/testbed/seed002-plan.ts).
 */
import { type App, Aws, CfnOutput, Duration, Fn, RemovalPolicy, Stack, type StackProps, Token } from 'aws-cdk-lib';
import * as autoscaling from 'aws-cdk-lib/aws-autoscaling';
import * as ec2 from 'aws-cdk-lib/aws-ec2';
import * as ecs from 'aws-cdk-lib/aws-ecs';
import * as elbv2 from 'aws-cdk-lib/aws-elasticloadbalancingv2';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as s3assets from 'aws-cdk-lib/aws-s3-assets';
import * as servicediscovery from 'aws-cdk-lib/aws-servicediscovery';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import * as vpclattice from 'aws-cdk-lib/aws-vpclattice';
import type { Construct } from 'constructs';
import { taskQueueName } from '../../core/ecs-client.js';
import { TARGET_PORTS } from '../../core/target-ports.js';
import { ecsWorkerBundle } from '../infra-paths.js';
import { ack } from '../nag.js';
import { resolveTestbedProps, type TestbedProps } from './props.js';
import { SEED002_INVENTORY, SEED002_OUTPUTS } from './seed002-plan.js';

export const SEED002_IMAGES = {
  node: 'public.ecr.aws/docker/library/node:20-slim',
  awsCli: 'public.ecr.aws/aws-cli/aws-cli:2.22.35',
} as const;

export interface Seed002StackProps extends StackProps {
  instanceType: string;
  agentPath: string;
  /** The ECS worker bundle (dist/ecs-worker.cjs): the client service's command. */
  ecsWorkerPath: string;
  /** The pipeline's data bucket (context testbedPipelineBucket); default a placeholder name. */
  pipelineBucketName?: string;
  /** The pipeline's state machine name (default Pathbench-Measurement). */
  stateMachineName?: string;
  /**
   * `net.ipv4.tcp_tw_reuse` in the client task (ECS systemControls, set when the task starts: its
   * /proc/sys is read-only, so no probe can change it later). Default 1, the seed's fix for
   * keep-alive-off runs exhausting ports in TIME_WAIT; 0 reproduces what it fixed.
   */
  tcpTwReuse?: 0 | 1 | 2;
}

/** The client task's tcp_tw_reuse unless context seed002TcpTwReuse says otherwise: the seed's fix. */
export const SEED002_DEFAULT_TW_REUSE = 1;

/** Context seed002TcpTwReuse as a tcp_tw_reuse value; anything but 0, 1 or 2 is refused. */
export function tcpTwReuseContext(v: unknown): 0 | 1 | 2 | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (String(v).trim() === '' || !(n === 0 || n === 1 || n === 2))
    throw new Error(`seed002TcpTwReuse: expected 0, 1 or 2 (net.ipv4.tcp_tw_reuse), got ${JSON.stringify(v)}`);
  return n as 0 | 1 | 2;
}

const CLUSTER = 'seed002';
const CLIENT_SERVICE = 'client';
/** Server services: name, VPC, AZ index, what it is for. */
const SERVERS = [
  { id: 'A', vpc: 'client', az: 0 },
  { id: 'L1', vpc: 'client', az: 0 },
  { id: 'L2', vpc: 'client', az: 1 },
  { id: 'B', vpc: 'server', az: 0 },
  { id: 'D', vpc: 'server', az: 0 },
  { id: 'G', vpc: 'server', az: 0 },
  { id: 'H', vpc: 'server', az: 0 },
  { id: 'F', vpc: 'tgw', az: 0 },
] as const;
const CIDRS = { client: '10.0.0.0/16', server: '10.2.0.0/16', tgw: '10.3.0.0/16' } as const;
type VpcName = keyof typeof CIDRS;

export class Seed002Stack extends Stack {
  readonly cluster: ecs.Cluster;
  readonly queue: sqs.Queue;
  readonly vpcs: Record<VpcName, ec2.Vpc>;

  constructor(scope: Construct, id: string, props: Seed002StackProps) {
    super(scope, id, props);
    const http = TARGET_PORTS.http;
    const tcp = TARGET_PORTS.tcp;

    // --- networks ---------------------------------------------------------------------------
    const vpcs = {} as Record<VpcName, ec2.Vpc>;
    for (const name of Object.keys(CIDRS) as VpcName[]) {
      const vpc = new ec2.Vpc(this, `${name[0].toUpperCase()}${name.slice(1)}Vpc`, {
        ipAddresses: ec2.IpAddresses.cidr(CIDRS[name]),
        maxAzs: 2,
        natGateways: 1,
        subnetConfiguration: [
          { name: 'public', subnetType: ec2.SubnetType.PUBLIC, cidrMask: 24 },
          { name: 'private', subnetType: ec2.SubnetType.PRIVATE_WITH_EGRESS, cidrMask: 24 },
        ],
      });
      ack(
        vpc,
        'a measurement testbed torn down after the run; flow logs would add cost and no finding',
        'AwsSolutions-VPC7',
      );
      vpcs[name] = vpc;
    }
    this.vpcs = vpcs;
    const privateRoutes = (v: ec2.Vpc) => v.privateSubnets.map((s) => s.routeTable.routeTableId);

    // B, D, G′, H's target: VPC peering client ↔ server.
    const peering = new ec2.CfnVPCPeeringConnection(this, 'Peering', {
      vpcId: vpcs.client.vpcId,
      peerVpcId: vpcs.server.vpcId,
    });
    const route = (
      idp: string,
      tables: string[],
      dest: string,
      via: Record<string, string>,
      dependsOn?: ec2.CfnTransitGatewayAttachment,
    ) =>
      tables.forEach((t, i) => {
        const r = new ec2.CfnRoute(this, `${idp}${i}`, { routeTableId: t, destinationCidrBlock: dest, ...via });
        if (dependsOn) r.addDependency(dependsOn);
      });
    route('PeerRouteClient', privateRoutes(vpcs.client), CIDRS.server, { vpcPeeringConnectionId: peering.ref });
    route('PeerRouteServer', privateRoutes(vpcs.server), CIDRS.client, { vpcPeeringConnectionId: peering.ref });

    // F: Transit Gateway client ↔ TGW VPC.
    const tgw = new ec2.CfnTransitGateway(this, 'Tgw', {
      description: 'pathbench seed-002 path F',
      defaultRouteTableAssociation: 'enable',
      defaultRouteTablePropagation: 'enable',
    });
    const attach = (name: VpcName) =>
      new ec2.CfnTransitGatewayAttachment(this, `TgwAttach${name}`, {
        transitGatewayId: tgw.ref,
        vpcId: vpcs[name].vpcId,
        subnetIds: vpcs[name].privateSubnets.map((s) => s.subnetId),
      });
    const clientAttach = attach('client');
    const tgwAttach = attach('tgw');
    route('TgwRouteClient', privateRoutes(vpcs.client), CIDRS.tgw, { transitGatewayId: tgw.ref }, clientAttach);
    route('TgwRouteServer', privateRoutes(vpcs.tgw), CIDRS.client, { transitGatewayId: tgw.ref }, tgwAttach);

    // --- cluster, hosts -----------------------------------------------------------------------
    const namespace = new servicediscovery.PrivateDnsNamespace(this, 'Names', {
      name: 'seed002.internal',
      vpc: vpcs.client,
      description: 'pathbench seed-002: names of the direct-IP servers',
    });
    this.cluster = new ecs.Cluster(this, 'Cluster', {
      clusterName: CLUSTER,
      vpc: vpcs.client,
      containerInsightsV2: ecs.ContainerInsights.ENABLED,
      defaultCloudMapNamespace: {
        name: 'svc.local',
        type: servicediscovery.NamespaceType.HTTP,
        useForServiceConnect: true,
      },
    });
    const cluster = this.cluster;
    const hostSg = (name: string, vpc: ec2.Vpc, sources: string[]) => {
      const sg = new ec2.SecurityGroup(this, `${name}Sg`, {
        vpc,
        description: `seed-002 ${name}`,
        allowAllOutbound: true,
      });
      for (const src of sources)
        for (const port of [http, tcp]) sg.addIngressRule(ec2.Peer.ipv4(src), ec2.Port.tcp(port), `probe from ${src}`);
      return sg;
    };
    const hosts: autoscaling.AutoScalingGroup[] = [];
    const hostRoles: iam.Role[] = [];
    const host = (name: string, vpc: ec2.Vpc, az: number) => {
      const sg = new ec2.SecurityGroup(this, `${name}HostSg`, { vpc, description: `seed-002 host ${name}` });
      // A launch template (new accounts cannot create launch configurations).
      const userData = ec2.UserData.forLinux();
      userData.addCommands(`echo 'ECS_INSTANCE_ATTRIBUTES={"pathbench-host":"${name}"}' >> /etc/ecs/ecs.config`);
      const hostRole = new iam.Role(this, `${name}HostRole`, {
        assumedBy: new iam.ServicePrincipal('ec2.amazonaws.com'),
      });
      hostRoles.push(hostRole);
      const launchTemplate = new ec2.LaunchTemplate(this, `${name}Lt`, {
        instanceType: new ec2.InstanceType(props.instanceType),
        machineImage: ecs.EcsOptimizedImage.amazonLinux2023(),
        securityGroup: sg,
        role: hostRole,
        userData,
        requireImdsv2: true,
        blockDevices: [{ deviceName: '/dev/xvda', volume: ec2.BlockDeviceVolume.ebs(30, { encrypted: true }) }],
      });
      const asg = new autoscaling.AutoScalingGroup(this, `${name}Host`, {
        vpc,
        vpcSubnets: { subnets: [vpc.privateSubnets[az]] },
        launchTemplate,
        minCapacity: 1,
        maxCapacity: 1,
      });
      const cp = new ecs.AsgCapacityProvider(this, `${name}Capacity`, {
        autoScalingGroup: asg,
        enableManagedTerminationProtection: false,
        enableManagedScaling: false,
      });
      // No drain hook (a Lambda and an SNS topic per host): a testbed host is only ever destroyed.
      // taskDrainTime is honoured at synth but no longer in the typed options of aws-cdk-lib 2.276.
      cluster.addAsgCapacityProvider(cp, {
        taskDrainTime: Duration.seconds(0),
      } as ecs.AddAutoScalingGroupCapacityOptions);
      hosts.push(asg);
      return cp;
    };

    // --- bundles and containers --------------------------------------------------------------
    const agent = new s3assets.Asset(this, 'AgentBundle', { path: props.agentPath });
    const ecsWorker = new s3assets.Asset(this, 'EcsWorkerBundle', { path: props.ecsWorkerPath });
    const logGroup = new logs.LogGroup(this, 'Logs', {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const taskDef = (
      name: string,
      files: s3assets.Asset[],
      command: string[],
      env: Record<string, string> = {},
      systemControls: ecs.SystemControl[] = [],
    ) => {
      const td = new ecs.Ec2TaskDefinition(this, `${name}Task`, {
        networkMode: ecs.NetworkMode.AWS_VPC,
        volumes: [{ name: 'bundles' }],
      });
      for (const f of files) f.grantRead(td.taskRole);
      const init = td.addContainer('fetch', {
        image: ecs.ContainerImage.fromRegistry(SEED002_IMAGES.awsCli),
        essential: false,
        memoryReservationMiB: 128,
        entryPoint: ['sh', '-c'],
        command: [
          files
            .map((f, i) => `aws s3 cp ${f.s3ObjectUrl} /bundles/${i === 0 ? 'agent.cjs' : 'ecs-worker.cjs'}`)
            .join(' && '),
        ],
        logging: ecs.LogDrivers.awsLogs({ logGroup, streamPrefix: `${name}-fetch` }),
      });
      init.addMountPoints({ sourceVolume: 'bundles', containerPath: '/bundles', readOnly: false });
      const main = td.addContainer('main', {
        image: ecs.ContainerImage.fromRegistry(SEED002_IMAGES.node),
        memoryReservationMiB: 1024,
        command,
        environment: env,
        // awsvpc: the task's network namespace, all its containers (set on this one only).
        ...(systemControls.length ? { systemControls } : {}),
        logging: ecs.LogDrivers.awsLogs({ logGroup, streamPrefix: name }),
        portMappings: [
          { name: 'http', containerPort: http, appProtocol: ecs.AppProtocol.http },
          { name: 'tcp', containerPort: tcp },
        ],
      });
      main.addMountPoints({ sourceVolume: 'bundles', containerPath: '/bundles', readOnly: true });
      main.addContainerDependencies({ container: init, condition: ecs.ContainerDependencyCondition.SUCCESS });
      return td;
    };
    const serveCommand = [
      'node',
      '/bundles/agent.cjs',
      'serve',
      '--host',
      '0.0.0.0',
      '--http',
      String(http),
      '--tcp',
      String(tcp),
    ];

    // --- servers ----------------------------------------------------------------------------
    const services: Record<string, ecs.Ec2Service> = {};
    const serverNames: Record<string, string> = {};
    for (const s of SERVERS) {
      const name = `server-${s.id.toLowerCase()}`;
      const vpc = vpcs[s.vpc];
      // Probes come from the client VPC; G's NLB and H's Lattice targets see other sources.
      const sources: string[] = [CIDRS.client];
      if (s.id === 'G') sources.push(CIDRS.server);
      if (s.id === 'H') sources.push('169.254.171.0/24');
      const cp = host(name, vpc, s.az);
      const svc = new ecs.Ec2Service(this, `Server${s.id}`, {
        cluster,
        serviceName: name,
        taskDefinition: taskDef(`Server${s.id}`, [agent], serveCommand),
        desiredCount: 1,
        minHealthyPercent: 0,
        maxHealthyPercent: 100,
        capacityProviderStrategies: [{ capacityProvider: cp.capacityProviderName, weight: 1 }],
        placementConstraints: [ecs.PlacementConstraint.memberOf(`attribute:pathbench-host == ${name}`)],
        securityGroups: [hostSg(`Server${s.id}`, vpc, sources)],
        vpcSubnets: { subnets: [vpc.privateSubnets[s.az]] },
        ...(s.id === 'D'
          ? { serviceConnectConfiguration: { services: [{ portMappingName: 'http', dnsName: 'backend', port: http }] } }
          : {}),
        ...(['A', 'B', 'F', 'L1', 'L2'].includes(s.id)
          ? {
              cloudMapOptions: { name: s.id.toLowerCase(), cloudMapNamespace: namespace, dnsTtl: Duration.seconds(10) },
            }
          : {}),
      });
      services[s.id] = svc;
      if (['A', 'B', 'F', 'L1', 'L2'].includes(s.id)) serverNames[s.id] = `${s.id.toLowerCase()}.seed002.internal`;
    }

    // --- G / G′: internal NLB, endpoint service, interface endpoint ----------------------------------
    const nlbSg = new ec2.SecurityGroup(this, 'NlbSg', { vpc: vpcs.server, description: 'seed-002 NLB' });
    nlbSg.addIngressRule(ec2.Peer.ipv4(CIDRS.client), ec2.Port.tcp(http), 'G′: from the client VPC over peering');
    nlbSg.addIngressRule(
      ec2.Peer.ipv4(CIDRS.server),
      ec2.Port.tcp(http),
      'G: PrivateLink traffic arrives from the NLB subnets',
    );
    const nlb = new elbv2.NetworkLoadBalancer(this, 'Nlb', {
      vpc: vpcs.server,
      internetFacing: false,
      crossZoneEnabled: false,
      securityGroups: [nlbSg],
      enforceSecurityGroupInboundRulesOnPrivateLinkTraffic: false,
    });
    nlb.addListener('Http', { port: http, protocol: elbv2.Protocol.TCP }).addTargets('ServerG', {
      port: http,
      protocol: elbv2.Protocol.TCP,
      targets: [services.G.loadBalancerTarget({ containerName: 'main', containerPort: http })],
      deregistrationDelay: Duration.seconds(10),
    });
    ack(nlb, 'a measurement testbed torn down after the run: no access logs', 'AwsSolutions-ELB2');
    const endpointService = new ec2.VpcEndpointService(this, 'EndpointService', {
      vpcEndpointServiceLoadBalancers: [nlb],
      acceptanceRequired: false,
      allowedPrincipals: [new iam.ArnPrincipal(`arn:${Aws.PARTITION}:iam::${Aws.ACCOUNT_ID}:root`)],
    });
    const endpointSg = hostSg('Endpoint', vpcs.client, [CIDRS.client]);
    const endpoint = new ec2.InterfaceVpcEndpoint(this, 'Endpoint', {
      vpc: vpcs.client,
      service: new ec2.InterfaceVpcEndpointService(endpointService.vpcEndpointServiceName, http),
      privateDnsEnabled: false,
      subnets: { subnets: vpcs.client.privateSubnets },
      securityGroups: [endpointSg],
      open: false,
    });

    // --- H: VPC Lattice ------------------------------------------------------------------------------
    const serviceNetwork = new vpclattice.CfnServiceNetwork(this, 'ServiceNetwork', {
      name: 'pathbench-seed002',
      authType: 'NONE',
    });
    // The client VPC's association: the client reaches the Lattice service's HTTP listener (:80).
    const latticeSg = new ec2.SecurityGroup(this, 'LatticeSg', {
      vpc: vpcs.client,
      description: 'seed-002 Lattice association',
    });
    latticeSg.addIngressRule(ec2.Peer.ipv4(CIDRS.client), ec2.Port.tcp(80), 'H: the client to the Lattice listener');
    new vpclattice.CfnServiceNetworkVpcAssociation(this, 'ServiceNetworkClientVpc', {
      serviceNetworkIdentifier: serviceNetwork.attrId,
      vpcIdentifier: vpcs.client.vpcId,
      securityGroupIds: [latticeSg.securityGroupId],
    });
    const latticeTg = new vpclattice.CfnTargetGroup(this, 'LatticeTargets', {
      type: 'IP',
      name: 'pathbench-seed002-h',
      config: {
        port: http,
        protocol: 'HTTP',
        protocolVersion: 'HTTP1',
        vpcIdentifier: vpcs.server.vpcId,
        ipAddressType: 'IPV4',
      },
    });
    const latticeService = new vpclattice.CfnService(this, 'LatticeService', {
      name: 'pathbench-seed002-h',
      authType: 'NONE',
    });
    new vpclattice.CfnListener(this, 'LatticeListener', {
      serviceIdentifier: latticeService.attrId,
      protocol: 'HTTP',
      port: 80,
      defaultAction: { forward: { targetGroups: [{ targetGroupIdentifier: latticeTg.attrId, weight: 100 }] } },
    });
    new vpclattice.CfnServiceNetworkServiceAssociation(this, 'ServiceNetworkService', {
      serviceNetworkIdentifier: serviceNetwork.attrId,
      serviceIdentifier: latticeService.attrId,
    });
    // ECS registers the H server's task IP in the target group (the service's VpcLatticeConfigurations).
    const latticeRole = new iam.Role(this, 'LatticeInfraRole', {
      assumedBy: new iam.ServicePrincipal('ecs.amazonaws.com'),
      description: 'lets ECS register the H server task in its VPC Lattice target group',
    });
    latticeRole.addToPolicy(
      new iam.PolicyStatement({
        actions: ['vpc-lattice:RegisterTargets', 'vpc-lattice:DeregisterTargets', 'vpc-lattice:ListTargets'],
        resources: [latticeTg.attrArn],
      }),
    );
    (services.H.node.defaultChild as ecs.CfnService).addPropertyOverride('VpcLatticeConfigurations', [
      { RoleArn: latticeRole.roleArn, TargetGroupArn: latticeTg.attrArn, PortName: 'http' },
    ]);

    // --- the client service: the task client, its queue and role ------------------------------------
    const queueName = taskQueueName(CLUSTER, CLIENT_SERVICE);
    this.queue = new sqs.Queue(this, 'ClientQueue', {
      queueName,
      encryption: sqs.QueueEncryption.SQS_MANAGED,
      enforceSSL: true,
      // A message nobody took fails its path at HeartbeatSeconds; an old one is worthless.
      retentionPeriod: Duration.hours(1),
      visibilityTimeout: Duration.minutes(5),
    });
    ack(
      this.queue,
      'a probe message is deleted when taken and is worthless once its state timed out: no dead-letter queue',
      'AwsSolutions-SQS3',
    );
    const bucket = props.pipelineBucketName ?? 'pathbench-data-bucket';
    const twReuse = props.tcpTwReuse ?? SEED002_DEFAULT_TW_REUSE;
    const clientTd = taskDef(
      'Client',
      [agent, ecsWorker],
      ['node', '/bundles/ecs-worker.cjs'],
      {
        PATHBENCH_QUEUE_URL: this.queue.queueUrl,
        PATHBENCH_SERVICE: CLIENT_SERVICE,
        PATHBENCH_BUCKET: bucket,
        PATHBENCH_AGENT: '/bundles/agent.cjs',
      },
      [{ namespace: 'net.ipv4.tcp_tw_reuse', value: String(twReuse) }],
    );
    const role = clientTd.taskRole;
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['sqs:ReceiveMessage', 'sqs:DeleteMessage', 'sqs:ChangeMessageVisibility'],
        resources: [this.queue.queueArn],
      }),
    );
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['s3:GetObject'],
        resources: [`arn:${Aws.PARTITION}:s3:::${bucket}/specs/run=*/path=*/client=${CLIENT_SERVICE}/*`],
      }),
    );
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['s3:PutObject'],
        resources: [`arn:${Aws.PARTITION}:s3:::${bucket}/raw/path=*/run=*/client=${CLIENT_SERVICE}/*`],
      }),
    );
    const machine = props.stateMachineName ?? 'Pathbench-Measurement';
    role.addToPrincipalPolicy(
      new iam.PolicyStatement({
        actions: ['states:SendTaskSuccess', 'states:SendTaskFailure', 'states:SendTaskHeartbeat'],
        resources: [`arn:${Aws.PARTITION}:states:${Aws.REGION}:${Aws.ACCOUNT_ID}:stateMachine:${machine}`],
      }),
    );
    const clientCp = host('client', vpcs.client, 0);
    new ecs.Ec2Service(this, 'Client', {
      cluster,
      serviceName: CLIENT_SERVICE,
      taskDefinition: clientTd,
      desiredCount: 1,
      minHealthyPercent: 0,
      maxHealthyPercent: 100,
      capacityProviderStrategies: [{ capacityProvider: clientCp.capacityProviderName, weight: 1 }],
      placementConstraints: [ecs.PlacementConstraint.memberOf('attribute:pathbench-host == client')],
      securityGroups: [
        new ec2.SecurityGroup(this, 'ClientSg', { vpc: vpcs.client, description: 'seed-002 client task' }),
      ],
      vpcSubnets: { subnets: [vpcs.client.privateSubnets[0]] },
      serviceConnectConfiguration: {},
    });

    this.acknowledge(hosts, hostRoles, role, machine, bucket);

    // --- outputs (infra/testbed/seed002-plan.ts reads them) -------------------------------------------
    const out = (k: keyof typeof SEED002_OUTPUTS, value: string) =>
      new CfnOutput(this, SEED002_OUTPUTS[k], { value, description: `seed-002 ${k}` });
    out('region', this.region);
    out('cluster', CLUSTER);
    out('clientService', CLIENT_SERVICE);
    out('tcpTwReuse', String(twReuse));
    out('queueUrl', this.queue.queueUrl);
    out('serverNames', JSON.stringify(serverNames));
    out('serviceConnectHost', 'backend');
    out('endpointDnsName', Fn.select(1, Fn.split(':', Fn.select(0, endpoint.vpcEndpointDnsEntries))));
    out('nlbDnsName', nlb.loadBalancerDnsName);
    out('latticeDnsName', latticeService.attrDnsEntryDomainName);
    if (hosts.length !== SEED002_INVENTORY.instances)
      throw new Error(`seed-002: ${hosts.length} hosts, inventory says ${SEED002_INVENTORY.instances}`);
  }

  /** The cdk-nag findings a short-lived measurement testbed accepts, each named with its reason. */
  private acknowledge(
    hosts: autoscaling.AutoScalingGroup[],
    hostRoles: iam.Role[],
    clientRole: iam.IRole,
    machine: string,
    bucket: string,
  ): void {
    for (const asg of hosts) {
      ack(asg, 'one host per service for the length of a measurement: no scaling notifications', 'AwsSolutions-AS3');
    }
    for (const r of hostRoles) {
      ack(
        r,
        "the ECS agent's managed policy (cluster registration, image pull, logs) is how the host joins the cluster",
        'AwsSolutions-IAM4[Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AmazonEC2ContainerServiceforEC2Role]',
      );
      ack(
        r,
        'ECS agent actions granted by CDK for the cluster (ecs:Submit* state changes): several have no resource-level permissions',
        'AwsSolutions-IAM5[Resource::*]',
        'AwsSolutions-IAM5[Action::ecs:Submit*]',
      );
    }
    ack(
      clientRole,
      `raw output only under the client service's own prefix (raw/path=*/run=*/client=…), specs read-only, task tokens of ${machine} only; CDK's asset grant reads the bundles`,
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::${bucket}/specs/run=*/path=*/client=${CLIENT_SERVICE}/*]`,
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::${bucket}/raw/path=*/run=*/client=${CLIENT_SERVICE}/*]`,
    );
    ack(
      this,
      "CDK's asset grant: read of the bundles in the CDK assets bucket only",
      'AwsSolutions-IAM5[Action::s3:GetObject*]',
      'AwsSolutions-IAM5[Action::s3:GetBucket*]',
      'AwsSolutions-IAM5[Action::s3:List*]',
      `AwsSolutions-IAM5[Resource::arn:<AWS::Partition>:s3:::cdk-hnb659fds-assets-${Token.isUnresolved(this.account) ? '<AWS::AccountId>' : this.account}-${this.region}/*]`,
    );
    ack(
      this,
      'the task client and servers read their settings (queue URL, service name, bucket) from plain environment variables: none is a secret',
      'AwsSolutions-ECS2',
    );
  }
}

/**
 * Add the seed-002 stack to `app`; instance type, account, agent bundle and pipeline bucket from the
 * testbed context; the agent and ECS worker bundles built now when missing or stale.
 */
export function addSeed002Testbed(
  app: App,
  props: Partial<TestbedProps> & { ecsWorkerPath?: string; stateMachineName?: string; tcpTwReuse?: 0 | 1 | 2 } = {},
): Seed002Stack {
  const tb = resolveTestbedProps(app, props);
  const region = (app.node.tryGetContext('testbedClientRegion') as string | undefined) ?? tb.clientRegion;
  return new Seed002Stack(app, 'PathbenchTestbed002', {
    env: { account: tb.account, region },
    description: 'pathbench seed-002 testbed: ECS service-to-service paths (A B D F G G′ H L1 L2)',
    instanceType: tb.instanceType,
    agentPath: tb.agentPath,
    ecsWorkerPath: props.ecsWorkerPath ?? ecsWorkerBundle(),
    pipelineBucketName: tb.pipelineBucketName,
    stateMachineName: props.stateMachineName,
    tcpTwReuse: props.tcpTwReuse ?? tcpTwReuseContext(app.node.tryGetContext('seed002TcpTwReuse')),
  });
}
