"""Where the lab's files are and how its sessions share the CPU: the bottom room, importing no other room."""
