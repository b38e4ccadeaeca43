"""Share groups' partitions (KIP-932): records handed out to members one by one, with
acquisition locks and delivery counts, their state kept by the share coordinator."""
