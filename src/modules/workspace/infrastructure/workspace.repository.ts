import { Injectable } from '@nestjs/common';
import { prepared } from '../../../shared/persistence/prepared-statements.js';
import { toId, toIdOrNull } from '../../../shared/persistence/sql.js';
import { UnitOfWork } from '../../../shared/persistence/unit-of-work.js';
import type { PageRequest } from '../../../shared/http/pagination.js';
import { pageOffset } from '../../../shared/http/pagination.js';
import { Membership } from '../domain/membership.entity.js';
import { Organization } from '../domain/organization.entity.js';
import { Project } from '../domain/project.entity.js';

export interface OrganizationWithRole {
  organization: Organization;
  role: Membership['role'];
}

const PROJECT_WITH_ROLE = `SELECT p.id, p.organization_id, p.title, p.top_level_card_id, p.created_by, p.created_at, m.role
   FROM workspace.projects p
   JOIN workspace.memberships m ON m.organization_id = p.organization_id AND m.user_id = $2
  WHERE p.id = $1`;
const PROJECT_WITH_ROLE_SQL = prepared(PROJECT_WITH_ROLE);
/** Every project of every team the user is in (GET /search). */
const VISIBLE_PROJECTS_SQL = prepared(
  `SELECT p.id FROM workspace.memberships m JOIN workspace.projects p ON p.organization_id = m.organization_id
    WHERE m.user_id = $1 ORDER BY p.id`,
);
/**
 * What a write relies on, held until it commits: the project row against its
 * deletion (KEY SHARE is enough), the caller's membership against a removal
 * or a role change (SHARE: a role UPDATE takes NO KEY UPDATE, which KEY SHARE
 * lets through).
 */
const PROJECT_WITH_ROLE_HELD_SQL = prepared(`${PROJECT_WITH_ROLE} FOR KEY SHARE OF p FOR SHARE OF m`);
/** The caller's role in a team, the membership row held as in `PROJECT_WITH_ROLE_HELD_SQL`. */
const ROLE_HELD_SQL = prepared(
  `SELECT role FROM workspace.memberships WHERE organization_id = $1 AND user_id = $2 FOR SHARE`,
);

interface ProjectWithRoleRow {
  id: unknown;
  organization_id: unknown;
  title: string;
  top_level_card_id: unknown;
  created_by: unknown;
  created_at: Date | string;
  role: Membership['role'];
}

/** The entity as TypeORM would have made it from the row (ids are numbers: both drivers read bigint as a number). */
function projectFromRow(row: ProjectWithRoleRow): Project {
  return Object.assign(new Project(), {
    id: toId(row.id),
    organizationId: toId(row.organization_id),
    title: row.title,
    topLevelCardId: toIdOrNull(row.top_level_card_id),
    createdBy: toId(row.created_by),
    createdAt: new Date(row.created_at),
  });
}

/** Reads and writes of the workspace schema. */
@Injectable()
export class WorkspaceRepository {
  constructor(private readonly uow: UnitOfWork) {}

  private get m() {
    return this.uow.manager;
  }

  membership(organizationId: number, userId: number): Promise<Membership | null> {
    return this.m.getRepository(Membership).findOneBy({ organizationId, userId });
  }

  /**
   * The user's role in the team (null: not a member), the membership row held
   * FOR SHARE until the transaction ends: a removal or a role change of the
   * member waits for the write that relied on it.
   */
  async heldRole(organizationId: number, userId: number): Promise<Membership['role'] | null> {
    const rows: Array<{ role: Membership['role'] }> = await this.m.query(ROLE_HELD_SQL, [organizationId, userId]);
    return rows[0]?.role ?? null;
  }

  /**
   * The project with the caller's membership in its team, in one query.
   * `hold` keeps both rows until the transaction ends (the project FOR KEY
   * SHARE, the membership FOR SHARE), so that neither the project's deletion
   * nor the caller's removal or change of role commits under a write that
   * relied on them: they wait for it, and a write that comes after them sees
   * them. A named statement (written out rather than built by TypeORM's query
   * builder): every filtered listing and every write to a project runs it,
   * and PostgreSQL parsed and planned the builder's text anew each time
   * (about 0.5 ms of the database's time; docs/PERFORMANCE.md, issue 15,
   * eighth pass).
   */
  async projectWithMembership(
    projectId: number,
    userId: number,
    hold = false,
  ): Promise<{ project: Project; role: Membership['role'] } | null> {
    const rows: ProjectWithRoleRow[] = await this.m.query(hold ? PROJECT_WITH_ROLE_HELD_SQL : PROJECT_WITH_ROLE_SQL, [projectId, userId]);
    const row = rows[0];
    return row ? { project: projectFromRow(row), role: row.role } : null;
  }

  async organizationsOf(userId: number, page: PageRequest): Promise<{ items: OrganizationWithRole[]; total: number }> {
    const qb = this.m
      .getRepository(Organization)
      .createQueryBuilder('o')
      .innerJoin(Membership, 'm', 'm.organization_id = o.id AND m.user_id = :userId', { userId })
      .addSelect('m.role', 'member_role')
      .orderBy('o.id', 'ASC');
    const total = await qb.getCount();
    const { raw, entities } = await qb.offset(pageOffset(page)).limit(page.perPage).getRawAndEntities();
    return { items: entities.map((organization, i) => ({ organization, role: raw[i].member_role })), total };
  }

  findOrganization(id: number): Promise<Organization | null> {
    return this.m.getRepository(Organization).findOneBy({ id });
  }

  saveOrganization(o: Organization): Promise<Organization> {
    return this.m.getRepository(Organization).save(o);
  }

  /**
   * A plain INSERT: `save` would turn into an UPDATE when a concurrent request
   * added the same member first, and answer 201 twice (issue 13); the unique
   * violation instead makes the unit of work re-run the use case, which then
   * sees the member and answers 409.
   */
  async insertMembership(ms: Membership): Promise<void> {
    await this.m.getRepository(Membership).insert(ms);
  }

  /** Whether the member was there to change. */
  async updateRole(organizationId: number, userId: number, role: Membership['role']): Promise<boolean> {
    const result = await this.m.getRepository(Membership).update({ organizationId, userId }, { role });
    return (result.affected ?? 0) > 0;
  }

  /** Whether the member was there to remove. */
  async deleteMembership(organizationId: number, userId: number): Promise<boolean> {
    const result = await this.m.getRepository(Membership).delete({ organizationId, userId });
    return (result.affected ?? 0) > 0;
  }

  members(organizationId: number): Promise<Membership[]> {
    return this.m.getRepository(Membership).find({ where: { organizationId }, order: { createdAt: 'ASC', userId: 'ASC' } });
  }

  /**
   * Locks the team's admin rows so two concurrent demotions cannot remove the
   * last admin: in ascending user id, so two of them meet in one order. It
   * waits for a write holding one of those rows (`heldRole`).
   */
  adminsForUpdate(organizationId: number): Promise<Membership[]> {
    return this.m
      .getRepository(Membership)
      .createQueryBuilder('m')
      .where('m.organization_id = :organizationId AND m.role = :role', { organizationId, role: 'admin' })
      .orderBy('m.userId', 'ASC')
      .setLock('pessimistic_write')
      .getMany();
  }

  async membersAmong(organizationId: number, userIds: number[]): Promise<number[]> {
    if (!userIds.length) return [];
    // One array parameter: `In()` binds each id on its own, and an import's
    // batch can name more users than a statement may bind (65 535).
    const rows = await this.m
      .getRepository(Membership)
      .createQueryBuilder('m')
      .where('m.organizationId = :organizationId AND m.userId = ANY(:userIds)', { organizationId, userIds })
      .getMany();
    return rows.map((r) => Number(r.userId));
  }

  async projectsOf(organizationId: number, page: PageRequest): Promise<{ items: Project[]; total: number }> {
    const [items, total] = await this.m.getRepository(Project).findAndCount({
      where: { organizationId },
      order: { id: 'ASC' },
      skip: pageOffset(page),
      take: page.perPage,
    });
    return { items, total };
  }

  /** Every project of every team the user belongs to, by id. */
  async projectsVisibleTo(userId: number, page: PageRequest): Promise<{ items: Project[]; total: number }> {
    const [items, total] = await this.m
      .getRepository(Project)
      .createQueryBuilder('p')
      .innerJoin(Membership, 'm', 'm.organization_id = p.organization_id AND m.user_id = :userId', { userId })
      .orderBy('p.id', 'ASC')
      .skip(pageOffset(page))
      .take(page.perPage)
      .getManyAndCount();
    return { items, total };
  }

  async visibleProjectIds(userId: number): Promise<number[]> {
    const rows = (await this.m.query(VISIBLE_PROJECTS_SQL, [userId])) as Array<{ id: string | number }>;
    return rows.map((r) => Number(r.id));
  }

  findProject(id: number): Promise<Project | null> {
    return this.m.getRepository(Project).findOneBy({ id });
  }

  saveProject(p: Project): Promise<Project> {
    return this.m.getRepository(Project).save(p);
  }

  async setTopLevelCard(projectId: number, cardId: number): Promise<void> {
    await this.m.getRepository(Project).update({ id: projectId }, { topLevelCardId: cardId });
  }

  /** Taken before a project's data is dropped: writes holding the row (KEY SHARE) finish first, later ones find no project. */
  async lockProjectForDeletion(id: number): Promise<void> {
    await this.m.query('SELECT id FROM workspace.projects WHERE id = $1 FOR UPDATE', [id]);
  }

  async deleteProject(id: number): Promise<void> {
    await this.m.getRepository(Project).delete({ id });
  }
}
