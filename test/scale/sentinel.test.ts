import { sentinelSuite } from './sentinel-suite.js';

// A redis-server master and replica watched by three Redis sentinels.
sentinelSuite('redis', 'Sentinel');
