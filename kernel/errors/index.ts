export { errorTable, type ErrorCode } from './table.js';
export { GatewayError, isGatewayError, toGatewayError, type ErrorDetails, type GatewayErrorOptions } from './gateway-error.js';
export { describeFailure } from './failure.js';
