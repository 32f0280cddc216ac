/**
 * DataLake: where measurements live and how they are queried. The data bucket (versioned,
 * retained with the stack, encrypted with the stack's own KMS key, its access logs in a second
 * bucket), the Glue database with the
 * samples tables (Parquet `samples`, raw JSONL `samples_jsonl`; columns from queries/samples.ddl.sql), the
 * `runs` and `paths` tables (queries/runs.ddl.sql, paths.ddl.sql), the analysts' views
 * (queries/views/, as Glue views), the Athena workgroup with encrypted results and a scan cutoff,
 * and one named query per .sql file under queries/.
 */
import { Aws, Duration, RemovalPolicy } from 'aws-cdk-lib';
import * as athena from 'aws-cdk-lib/aws-athena';
import * as glue from 'aws-cdk-lib/aws-glue';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import * as s3 from 'aws-cdk-lib/aws-s3';
import { Construct } from 'constructs';
import {
  loadQuery,
  queryNames,
  RUN_TABLES,
  type RunTable,
  runTableColumns,
  samplesColumns,
  trinoType,
  viewDefinitions,
} from '../../queries/sql.js';
import { ack } from '../nag.js';

/** Object prefixes of the data bucket (core/keys.ts) plus SSM command output. */
export const DATA_PREFIXES = [
  'runs/',
  'specs/',
  'raw/',
  'samples/',
  'parquet/',
  'reports/',
  'trends/',
  'tables/',
  'ssm-output/',
] as const;
/** Named plans (`pathbench plan put`): their noncurrent versions are the plans' history and never expire. */
export const PLANS_PREFIX = 'plans/';
/** Where the workgroup writes query results. */
export const ATHENA_RESULTS = 'athena-results/';

export interface DataLakeProps {
  /** Glue database name; default "pathbench". */
  databaseName?: string;
  /** Athena per-query scan limit; default 10 GiB. */
  bytesScannedCutoffPerQuery?: number;
}

export class DataLake extends Construct {
  readonly bucket: s3.Bucket;
  /** The data bucket's key (SSE-KMS): Athena's results are encrypted with it too. */
  readonly dataKey: kms.Key;
  readonly databaseName: string;
  /** The Parquet table the named queries read. */
  readonly tableName = 'samples';
  /** The raw JSONL table (the contract); the query adapter's default is the same name. */
  readonly jsonlTableName = 'samples_jsonl';
  readonly workgroup: athena.CfnWorkGroup;
  readonly workgroupName = 'pathbench';

  constructor(scope: Construct, id: string, props: DataLakeProps = {}) {
    super(scope, id);

    const accessLogs = new s3.Bucket(this, 'AccessLogs', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.S3_MANAGED,
      enforceSSL: true,
      objectOwnership: s3.ObjectOwnership.BUCKET_OWNER_PREFERRED,
      lifecycleRules: [{ expiration: Duration.days(90) }],
      removalPolicy: RemovalPolicy.RETAIN,
    });
    ack(accessLogs, 'This is the access-log bucket; logging it into itself would loop.', 'AwsSolutions-S1');
    // The data is encrypted with a key the operator controls (rotated yearly, retained with the
    // data, every use in CloudTrail, disabled to cut off all reads at once), not S3's own. The key
    // is used only through S3 in this region, by principals of this account: whoever S3's
    // policies let read or write an object may decrypt or encrypt it. Calls to KMS itself are
    // left to IAM (the root statement CDK adds): the only policy of the stack that grants one is
    // CDK's bucket grant to the mesh machine (kms:Decrypt, for its ItemReader's reads).
    this.dataKey = new kms.Key(this, 'DataKey', {
      description: 'pathbench: encrypts the data bucket (measurements, specs, reports, query results)',
      enableKeyRotation: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    this.dataKey.addToResourcePolicy(
      new iam.PolicyStatement({
        sid: 'UseThroughS3ByThisAccount',
        principals: [new iam.AnyPrincipal()],
        actions: ['kms:Decrypt', 'kms:GenerateDataKey*', 'kms:Encrypt', 'kms:ReEncrypt*', 'kms:DescribeKey'],
        resources: ['*'],
        conditions: {
          StringEquals: { 'kms:CallerAccount': Aws.ACCOUNT_ID, 'kms:ViaService': `s3.${Aws.REGION}.amazonaws.com` },
        },
      }),
    );
    this.bucket = new s3.Bucket(this, 'Data', {
      blockPublicAccess: s3.BlockPublicAccess.BLOCK_ALL,
      encryption: s3.BucketEncryption.KMS,
      encryptionKey: this.dataKey,
      // One data key per bucket and period instead of a KMS call per object: the raw and sample
      // files are many and small.
      bucketKeyEnabled: true,
      enforceSSL: true,
      versioned: true,
      serverAccessLogsBucket: accessLogs,
      serverAccessLogsPrefix: 'data/',
      lifecycleRules: [
        // Old versions of the measurements expire; plans/ is left out: its versions are the plans' history.
        ...[...DATA_PREFIXES, ATHENA_RESULTS].map((prefix) => ({
          prefix,
          noncurrentVersionExpiration: Duration.days(30),
        })),
        { abortIncompleteMultipartUploadAfter: Duration.days(7) },
        { prefix: ATHENA_RESULTS, expiration: Duration.days(30) },
        { prefix: 'ssm-output/', expiration: Duration.days(30) },
      ],
      // Measurements are the product; never delete them with the stack.
      removalPolicy: RemovalPolicy.RETAIN,
    });
    const samples = this.bucket.s3UrlForObject('samples/');
    const parquet = this.bucket.s3UrlForObject('parquet/');

    this.databaseName = props.databaseName ?? 'pathbench';
    const database = new glue.CfnDatabase(this, 'Database', {
      catalogId: Aws.ACCOUNT_ID,
      databaseInput: { name: this.databaseName, description: 'pathbench measurements' },
    });
    const { columns, partitions } = samplesColumns();
    // Both tables: the DDL's columns, partitioned by path and run; partitions are registered by
    // CollectOutput (ALTER TABLE … ADD IF NOT EXISTS PARTITION in both), as run ids and path ids
    // are free-form (projection would need an enum or an equality filter on every query).
    const tableInput = (name: string, description: string) => ({
      name,
      description,
      tableType: 'EXTERNAL_TABLE',
      partitionKeys: partitions.map((c) => ({ name: c.name, type: c.type })),
    });
    const table = new glue.CfnTable(this, 'SamplesTable', {
      catalogId: Aws.ACCOUNT_ID,
      databaseName: this.databaseName,
      tableInput: {
        ...tableInput(this.tableName, 'samples as Parquet, one file per path and run (queries/samples.ddl.sql)'),
        parameters: { classification: 'parquet', EXTERNAL: 'TRUE' },
        storageDescriptor: {
          columns: columns.map((c) => ({ name: c.name, type: c.type })),
          location: parquet,
          inputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetInputFormat',
          outputFormat: 'org.apache.hadoop.hive.ql.io.parquet.MapredParquetOutputFormat',
          serdeInfo: { serializationLibrary: 'org.apache.hadoop.hive.ql.io.parquet.serde.ParquetHiveSerDe' },
        },
      },
    });
    table.node.addDependency(database);
    const jsonlTable = new glue.CfnTable(this, 'SamplesJsonlTable', {
      catalogId: Aws.ACCOUNT_ID,
      databaseName: this.databaseName,
      tableInput: {
        ...tableInput(this.jsonlTableName, 'raw samples, one JSON record per line (queries/samples_jsonl.ddl.sql)'),
        parameters: { classification: 'json', EXTERNAL: 'TRUE' },
        storageDescriptor: {
          columns: columns.map((c) => ({ name: c.name, type: c.type })),
          location: samples,
          inputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
          outputFormat: 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat',
          serdeInfo: { serializationLibrary: 'org.openx.data.jsonserde.JsonSerDe' },
        },
      },
    });
    jsonlTable.node.addDependency(database);
    // What each run and path was (queries/runs.ddl.sql, queries/paths.ddl.sql): one JSON object
    // per run under tables/<table>/, written by SummarizeRun; unpartitioned, nothing to register.
    const tableLocation = (table: RunTable) => this.bucket.s3UrlForObject(`tables/${table}/`);
    for (const name of RUN_TABLES) {
      const t = new glue.CfnTable(this, `${name[0].toUpperCase()}${name.slice(1)}Table`, {
        catalogId: Aws.ACCOUNT_ID,
        databaseName: this.databaseName,
        tableInput: {
          name,
          description: `what each ${name === 'runs' ? 'run' : 'path of each run'} was (queries/${name}.ddl.sql)`,
          tableType: 'EXTERNAL_TABLE',
          parameters: { classification: 'json', EXTERNAL: 'TRUE' },
          storageDescriptor: {
            columns: runTableColumns(name).map((c) => ({ name: c.name, type: c.type })),
            location: tableLocation(name),
            inputFormat: 'org.apache.hadoop.mapred.TextInputFormat',
            outputFormat: 'org.apache.hadoop.hive.ql.io.HiveIgnoreKeyTextOutputFormat',
            serdeInfo: { serializationLibrary: 'org.openx.data.jsonserde.JsonSerDe' },
          },
        },
      });
      t.node.addDependency(database);
    }

    // The analysts' views (queries/views/), there from the first deploy, as Athena stores a view:
    // a Glue VIRTUAL_VIEW whose original text is `/* Presto View: <base64 JSON> */` (its SQL,
    // catalog, schema and typed columns). The views' named queries stay: they re-create a view
    // the same way.
    for (const v of viewDefinitions()) {
      const definition = {
        originalSql: v.select,
        catalog: 'awsdatacatalog',
        schema: this.databaseName,
        columns: v.columns.map((c) => ({ name: c.name, type: trinoType(c.type) })),
      };
      const view = new glue.CfnTable(
        this,
        `View${v.name.replace(/(^|_)([a-z])/g, (_m, _u, c: string) => c.toUpperCase())}`,
        {
          catalogId: Aws.ACCOUNT_ID,
          databaseName: this.databaseName,
          tableInput: {
            name: v.name,
            description: `queries/views/${v.name}.sql`,
            tableType: 'VIRTUAL_VIEW',
            parameters: { presto_view: 'true', comment: 'Presto View' },
            viewOriginalText: `/* Presto View: ${Buffer.from(JSON.stringify(definition)).toString('base64')} */`,
            viewExpandedText: '/* Presto View */',
            partitionKeys: [],
            storageDescriptor: {
              columns: v.columns.map((c) => ({ name: c.name, type: c.type })),
              serdeInfo: {},
            },
          },
        },
      );
      view.node.addDependency(database);
      view.node.addDependency(table);
    }

    this.workgroup = new athena.CfnWorkGroup(this, 'Workgroup', {
      name: this.workgroupName,
      description: 'pathbench queries (results encrypted under athena-results/)',
      state: 'ENABLED',
      recursiveDeleteOption: true,
      workGroupConfiguration: {
        enforceWorkGroupConfiguration: true,
        publishCloudWatchMetricsEnabled: true,
        bytesScannedCutoffPerQuery: props.bytesScannedCutoffPerQuery ?? 10 * 1024 ** 3,
        engineVersion: { selectedEngineVersion: 'Athena engine version 3' },
        resultConfiguration: {
          outputLocation: this.bucket.s3UrlForObject(ATHENA_RESULTS),
          encryptionConfiguration: { encryptionOption: 'SSE_KMS', kmsKey: this.dataKey.keyArn },
        },
      },
    });
    for (const name of queryNames()) {
      const q = new athena.CfnNamedQuery(this, `Query${name.replace(/[^A-Za-z0-9]/g, '_')}`, {
        name: `pathbench-${name.replace(/[/.]/g, '-')}`,
        description: `queries/${name}.sql`,
        database: this.databaseName,
        workGroup: this.workgroupName,
        // parquet_copy's partition is filled in per path by the pipeline; the named query shows
        // it with stand-ins to replace.
        queryString: loadQuery(name, {
          database: this.databaseName,
          location:
            name === 'runs.ddl' ? tableLocation('runs') : name === 'paths.ddl' ? tableLocation('paths') : parquet,
          jsonlLocation: samples,
          path: 'PATH_ID',
          run: 'RUN_ID',
        }),
      });
      q.node.addDependency(this.workgroup);
      q.node.addDependency(database);
    }
  }
}
