"""Makes `iret_training` importable when pytest runs from another folder."""
