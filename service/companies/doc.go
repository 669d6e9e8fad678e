// Package companies holds the use cases of a conglomerate's companies:
// creating, reading, updating and archiving them, the conglomerate views
// and settings, company API keys, provisioning (start, heal, the outbox
// the worker sweeps), the admin health check and the disabling of a
// company's own user sign-in.
package companies
