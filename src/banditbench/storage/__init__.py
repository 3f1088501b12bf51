"""Result storage and provenance: deterministic result files (resultio), what produced them (provenance, fingerprint), zip checks, the script rules' logs."""
