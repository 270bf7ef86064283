//! szip (CCSDS 121.0-B-3) codec. See `spec/szip.md`.
