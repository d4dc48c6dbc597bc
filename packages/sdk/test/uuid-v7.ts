// The layout of a UUIDv7 string (RFC 9562): version 7, variant 10xx, lowercase hex.
export const UUID_V7 = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
