"""Result files: incremental chunks (npz) and, later, VTU/XDMF export."""
