// Package models holds the GORM row types, the enums for every state the
// spec names, and the domain error type. It does no I/O: the store reads and
// writes these rows, service/ decides what they mean, and api/ and mcp/
// convert them to their own response types.
package models
